"""A segmentation-style loader over image + mask .npy pairs (as KiTS19's case_x.npy / case_y.npy):
each sample is image_<i>.npy (3 x 192 x 192 float32, 432 KiB) and label_<i>.npy (192 x 192
uint8, 36 KiB), both np.load'ed; a DataLoader with 2 persistent workers, shuffle, batch 3,
3 epochs, a 4 ms step. `dlio-run fit` gives the two file sizes as
dataset.record_length_bytes_sizes, and compare scores numpy's fread at the kernel level.

  npy_image_mask.py make DIR   writes DIR/imgs/{image,label}_<i>.npy
  npy_image_mask.py run DIR    trains over them
"""
import os
import sys
import time

import numpy as np

PAIRS = 30


def path(data, kind, i):
    return os.path.join(data, 'imgs', '%s_%03d.npy' % (kind, i))


def make(data):
    os.makedirs(os.path.join(data, 'imgs'), exist_ok=True)
    rng = np.random.default_rng(3)
    for i in range(PAIRS):
        np.save(path(data, 'image', i), rng.random((3, 192, 192), dtype=np.float32))
        np.save(path(data, 'label', i), rng.integers(0, 4, (192, 192), dtype=np.uint8))


def run(data):
    import torch
    from torch.utils.data import DataLoader, Dataset

    class Pairs(Dataset):
        def __len__(self):
            return PAIRS

        def __getitem__(self, i):
            x = np.load(path(data, 'image', i))
            y = np.load(path(data, 'label', i))
            return torch.from_numpy(x), torch.from_numpy(y.astype(np.int64))

    torch.manual_seed(11)
    loader = DataLoader(Pairs(), batch_size=3, shuffle=True, num_workers=2, persistent_workers=True)
    for _ in range(3):
        for _ in loader:
            time.sleep(0.004)


if __name__ == '__main__':
    (make if sys.argv[1] == 'make' else run)(sys.argv[2])
