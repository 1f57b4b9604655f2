"""A dataset converted to one HDF5 file with a group per sample (`sample_<i>/image`, a 96 x 96 x 3
uint8 array, and `sample_<i>/label`, a scalar), as many conversion scripts write them; a
DataLoader (2 workers, shuffle, batch 16) whose Dataset opens the file lazily once per worker and
reads `f['sample_%d' % i]['image'][()]` and the label per sample, 2 epochs, a 3 ms step.

  h5_groups_per_sample.py make DIR   writes DIR/converted.h5
  h5_groups_per_sample.py run DIR    trains over it
"""
import os
import sys
import time

import numpy as np

N = 400


def make(data):
    import h5py
    os.makedirs(data, exist_ok=True)
    rng = np.random.default_rng(8)
    with h5py.File(os.path.join(data, 'converted.h5'), 'w') as f:
        for i in range(N):
            g = f.create_group('sample_%d' % i)
            g['image'] = rng.integers(0, 255, (96, 96, 3), dtype=np.uint8)
            g['label'] = np.int64(i % 10)


def run(data):
    import h5py
    import torch
    from torch.utils.data import DataLoader, Dataset

    class Converted(Dataset):
        def __init__(self):
            self.f = None

        def __len__(self):
            return N

        def __getitem__(self, i):
            if self.f is None:
                self.f = h5py.File(os.path.join(data, 'converted.h5'), 'r')
            g = self.f['sample_%d' % i]
            return torch.from_numpy(g['image'][()]), int(g['label'][()])

    torch.manual_seed(0)
    loader = DataLoader(Converted(), batch_size=16, shuffle=True, num_workers=2)
    for _ in range(2):
        for x, y in loader:
            time.sleep(0.003)


if __name__ == '__main__':
    {'make': make, 'run': run}[sys.argv[1]](sys.argv[2])
