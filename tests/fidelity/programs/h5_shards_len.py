"""Training shards as HDF5 files (8 files x 64 samples of 16 x 16 x 16 float32 = 16 KiB, an
`x` and a `y` dataset each), a Dataset whose __init__ opens every shard to learn its length
(`len(f['x'])`) and builds a global index, and whose __getitem__ keeps one h5py.File per shard
per worker (opened lazily) and reads `f['x'][j]` and `f['y'][j]`; a DataLoader (2 workers,
shuffle, batch 16, persistent workers), 2 epochs, a 3 ms step.

  h5_shards_len.py make DIR   writes DIR/shard_<k>.h5
  h5_shards_len.py run DIR    trains over them
"""
import bisect
import glob
import os
import sys
import time

import numpy as np

SHARDS, PER = 8, 64


def make(data):
    import h5py
    os.makedirs(data, exist_ok=True)
    rng = np.random.default_rng(8)
    for k in range(SHARDS):
        with h5py.File(os.path.join(data, 'shard_%02d.h5' % k), 'w') as f:
            f.create_dataset('x', data=rng.random((PER, 16, 16, 16), dtype=np.float32))
            f.create_dataset('y', data=rng.integers(0, 10, PER, dtype=np.int64))


def run(data):
    import h5py
    import torch
    from torch.utils.data import DataLoader, Dataset

    class Shards(Dataset):
        def __init__(self, root):
            self.paths = sorted(glob.glob(os.path.join(root, 'shard_*.h5')))
            self.starts, total = [], 0
            for p in self.paths:
                with h5py.File(p, 'r') as f:
                    self.starts.append(total)
                    total += len(f['x'])
            self.total = total
            self.files = {}

        def __len__(self):
            return self.total

        def __getitem__(self, i):
            k = bisect.bisect_right(self.starts, i) - 1
            if k not in self.files:
                self.files[k] = h5py.File(self.paths[k], 'r')
            f, j = self.files[k], i - self.starts[k]
            return torch.from_numpy(f['x'][j]), int(f['y'][j])

    torch.manual_seed(2)
    loader = DataLoader(Shards(data), batch_size=16, shuffle=True, num_workers=2,
                        persistent_workers=True)
    for _ in range(2):
        for x, y in loader:
            time.sleep(0.003)


if __name__ == '__main__':
    {'make': make, 'run': run}[sys.argv[1]](sys.argv[2])
