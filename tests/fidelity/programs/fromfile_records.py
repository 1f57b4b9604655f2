"""Fixed-size records in one big binary file, read with np.fromfile(offset=...) per sample: a
map-style Dataset over 2,048 records of 4 x 1,024 float32 (16 KiB) in features.bin, 2 workers,
shuffle, batch 16, 2 epochs, a 2 ms step.

  fromfile_records.py make DIR   writes DIR/features.bin
  fromfile_records.py run DIR    trains over it
"""
import os
import sys
import time

import numpy as np

N, SHAPE = 2048, (4, 1024)
RECORD = 4 * SHAPE[0] * SHAPE[1]


def make(data):
    os.makedirs(data, exist_ok=True)
    np.random.default_rng(9).random((N,) + SHAPE, dtype=np.float32).tofile(
        os.path.join(data, 'features.bin'))


def run(data):
    import torch
    from torch.utils.data import DataLoader, Dataset

    f = os.path.join(data, 'features.bin')

    class Records(Dataset):
        def __len__(self):
            return N

        def __getitem__(self, i):
            a = np.fromfile(f, dtype=np.float32, count=SHAPE[0] * SHAPE[1], offset=i * RECORD)
            return torch.from_numpy(a.reshape(SHAPE))

    torch.manual_seed(0)
    loader = DataLoader(Records(), batch_size=16, shuffle=True, num_workers=2)
    for _ in range(2):
        for x in loader:
            time.sleep(0.002)


if __name__ == '__main__':
    {'make': make, 'run': run}[sys.argv[1]](sys.argv[2])
