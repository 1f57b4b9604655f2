"""Compressed per-sample archives: np.savez_compressed of a quantized float32 field (128 x 128,
values on a coarse grid, so deflate keeps about a quarter) and its int label, one file per sample,
read by a map-style Dataset with np.load; DataLoader with 2 workers, shuffle, batch 8, 2 epochs,
a 3 ms step.

  npz_compressed.py make DIR   writes DIR/fields/<i>.npz (160 files)
  npz_compressed.py run DIR    trains over them
"""
import os
import sys
import time

import numpy as np

N = 160


def path(data, i):
    return os.path.join(data, 'fields', 'f_%05d.npz' % i)


def make(data):
    os.makedirs(os.path.join(data, 'fields'), exist_ok=True)
    rng = np.random.default_rng(21)
    for i in range(N):
        field = (rng.random((128, 128), dtype=np.float32) * 16).round() / 16
        np.savez_compressed(path(data, i), x=field, y=np.int64(i % 7))


def run(data):
    import torch
    from torch.utils.data import DataLoader, Dataset

    class Fields(Dataset):
        def __len__(self):
            return N

        def __getitem__(self, i):
            with np.load(path(data, i)) as z:
                return torch.from_numpy(z['x']), int(z['y'])

    torch.manual_seed(0)
    loader = DataLoader(Fields(), batch_size=8, shuffle=True, num_workers=2)
    for _ in range(2):
        for x, y in loader:
            time.sleep(0.003)


if __name__ == '__main__':
    {'make': make, 'run': run}[sys.argv[1]](sys.argv[2])
