"""An I/O-bound PyTorch input loop that reads into memory it keeps: a Dataset whose workers each
allocate one buffer and read every sample's .npy data into it (f.readinto after the header, as
zero-copy loaders do), a DataLoader with 2 fork workers, shuffle and batch 4, 2 epochs, a 1 ms
emulated step. Its reads fault in no fresh page after a worker's first: `dlio-run fit` leaves
reader.client_costs at its default (none). Its requests are no np.load's (a 4 KiB fill, then one
read of the rest at 4096): fit holds them against reader.io_model pyio's and finds the calls
(pyio_head_bytes 128, pyio_call readinto).

  torch_npy_readinto.py make DIR   writes DIR/train/img_<i>_of_16.npy (2 MiB of uint8 each)
  torch_npy_readinto.py run DIR    trains over them
"""
import os
import sys
import time

import numpy as np

FILES = 16
SHAPE = (1024, 2048)


def paths(data):
    return [os.path.join(data, 'train', 'img_%d_of_%d.npy' % (i, FILES)) for i in range(FILES)]


def make(data):
    os.makedirs(os.path.join(data, 'train'), exist_ok=True)
    rng = np.random.default_rng(3)
    for p in paths(data):
        np.save(p, rng.integers(0, 255, SHAPE, dtype=np.uint8))


def run(data):
    import torch
    from torch.utils.data import DataLoader, Dataset

    class Npy(Dataset):
        def __init__(self):
            self.paths = paths(data)
            self.buffer = None  # each worker's own, made on its first sample

        def __len__(self):
            return len(self.paths)

        def __getitem__(self, i):
            if self.buffer is None:
                self.buffer = np.empty(SHAPE, np.uint8)
            with open(self.paths[i], 'rb') as f:
                version = np.lib.format.read_magic(f)
                np.lib.format._check_version(version)
                shape, _, dtype = np.lib.format._read_array_header(f, version)
                assert shape == SHAPE and dtype == np.uint8
                f.readinto(memoryview(self.buffer).cast('B'))
            return int(self.buffer[0, 0])

    torch.manual_seed(11)
    loader = DataLoader(Npy(), batch_size=4, shuffle=True, num_workers=2)
    for _ in range(2):
        for _ in loader:
            time.sleep(0.001)


if __name__ == '__main__':
    {'make': make, 'run': run}[sys.argv[1]](sys.argv[2])
