"""A raw-bytes loader: a Dataset that reads each .npy file whole with f.read() and views its data
with np.frombuffer past the header (no np.load), a DataLoader with 2 fork workers, shuffle and
batch 2, 2 epochs, a 1 ms emulated step. Its requests are Python's FileIO.readall (a read of the
file's size + 1, then one of 1 byte): `dlio-run fit` holds them against reader.io_model pyio's
and finds f.read() (pyio_head_bytes 0, pyio_read_size 0, pyio_call read).

  npy_rawbytes.py make DIR   writes DIR/train/raw_<i>_of_12.npy (float32, 300 KB to 1.2 MB)
  npy_rawbytes.py run DIR    trains over them
"""
import os
import sys
import time

import numpy as np

FILES = 12


def paths(data):
    return [os.path.join(data, 'train', 'raw_%d_of_%d.npy' % (i, FILES)) for i in range(FILES)]


def make(data):
    os.makedirs(os.path.join(data, 'train'), exist_ok=True)
    rng = np.random.default_rng(7)
    for i, p in enumerate(paths(data)):
        np.save(p, rng.random((75000 + 25000 * i,), dtype=np.float32))


def run(data):
    import torch
    from torch.utils.data import DataLoader, Dataset

    class Raw(Dataset):
        def __len__(self):
            return FILES

        def __getitem__(self, i):
            with open(paths(data)[i], 'rb') as f:
                raw = f.read()
            x = np.frombuffer(raw, dtype=np.float32, offset=128)
            return float(x[:16].sum())

    torch.manual_seed(5)
    loader = DataLoader(Raw(), batch_size=2, shuffle=True, num_workers=2)
    for _ in range(2):
        for _ in loader:
            time.sleep(0.001)


if __name__ == '__main__':
    {'make': make, 'run': run}[sys.argv[1]](sys.argv[2])
