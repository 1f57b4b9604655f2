"""Feature shards as .npy files (6 files x 128 rows of 2,048 float32 = 8 KiB), a Dataset whose
__init__ maps every shard to read its length (np.load(path, mmap_mode='r').shape[0]), and whose
__getitem__ maps each shard once per worker (lazily) and copies row j out; a DataLoader
(2 workers, shuffle, batch 32), 2 epochs, a 2 ms step.

  npy_shards_len.py make DIR   writes DIR/shard_<k>.npy
  npy_shards_len.py run DIR    trains over them
"""
import bisect
import glob
import os
import sys
import time

import numpy as np

SHARDS, ROWS, D = 6, 128, 2048


def make(data):
    os.makedirs(data, exist_ok=True)
    rng = np.random.default_rng(6)
    for k in range(SHARDS):
        np.save(os.path.join(data, 'shard_%d.npy' % k), rng.random((ROWS, D), dtype=np.float32))


def run(data):
    import torch
    from torch.utils.data import DataLoader, Dataset

    class Shards(Dataset):
        def __init__(self, root):
            self.paths = sorted(glob.glob(os.path.join(root, 'shard_*.npy')))
            self.starts, total = [], 0
            for p in self.paths:
                self.starts.append(total)
                total += np.load(p, mmap_mode='r').shape[0]
            self.total = total
            self.arrays = {}

        def __len__(self):
            return self.total

        def __getitem__(self, i):
            k = bisect.bisect_right(self.starts, i) - 1
            if k not in self.arrays:
                self.arrays[k] = np.load(self.paths[k], mmap_mode='r')
            return torch.from_numpy(np.array(self.arrays[k][i - self.starts[k]]))

    torch.manual_seed(3)
    loader = DataLoader(Shards(data), batch_size=32, shuffle=True, num_workers=2)
    for _ in range(2):
        for x in loader:
            time.sleep(0.002)


if __name__ == '__main__':
    {'make': make, 'run': run}[sys.argv[1]](sys.argv[2])
