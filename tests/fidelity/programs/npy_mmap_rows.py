"""Preprocessed features in one big .npy, opened with np.load(mmap_mode='r') once per DataLoader
worker (lazily, in __getitem__) and indexed per sample: 2,048 rows of 8 KiB (2,048 float32), a
row copied out with np.array(arr[i]); 2 workers, shuffle, batch 32, 2 epochs, a 2 ms step.

  npy_mmap_rows.py make DIR   writes DIR/features.npy
  npy_mmap_rows.py run DIR    trains over it
"""
import os
import sys
import time

import numpy as np

N, D = 2048, 2048


def make(data):
    os.makedirs(data, exist_ok=True)
    np.save(os.path.join(data, 'features.npy'),
            np.random.default_rng(4).random((N, D), dtype=np.float32))


def run(data):
    import torch
    from torch.utils.data import DataLoader, Dataset

    class Rows(Dataset):
        def __init__(self):
            self.arr = None

        def __len__(self):
            return N

        def __getitem__(self, i):
            if self.arr is None:
                self.arr = np.load(os.path.join(data, 'features.npy'), mmap_mode='r')
            return torch.from_numpy(np.array(self.arr[i]))

    torch.manual_seed(0)
    loader = DataLoader(Rows(), batch_size=32, shuffle=True, num_workers=2)
    for _ in range(2):
        for x in loader:
            time.sleep(0.002)


if __name__ == '__main__':
    {'make': make, 'run': run}[sys.argv[1]](sys.argv[2])
