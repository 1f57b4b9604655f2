"""A folder of images converted to one HDF5 file with one dataset per sample at the root (named
by the sample's index, `'0'`, `'1'`, ...; 64 x 64 x 3 uint8) plus a `labels` dataset of all the
labels, as many quick conversion scripts write them; a DataLoader (2 workers, shuffle, batch 32)
whose Dataset opens the file once per worker and reads `f[str(i)][()]` and `f['labels'][i]`,
2 epochs, a 4 ms step.

  h5_dataset_per_sample.py make DIR   writes DIR/train.h5
  h5_dataset_per_sample.py run DIR    trains over it
"""
import os
import sys
import time

import numpy as np

N = 512


def make(data):
    import h5py
    os.makedirs(data, exist_ok=True)
    rng = np.random.default_rng(3)
    with h5py.File(os.path.join(data, 'train.h5'), 'w') as f:
        for i in range(N):
            f.create_dataset(str(i), data=rng.integers(0, 255, (64, 64, 3), dtype=np.uint8))
        f.create_dataset('labels', data=rng.integers(0, 100, N, dtype=np.int64))


def run(data):
    import h5py
    import torch
    from torch.utils.data import DataLoader, Dataset

    class H5Images(Dataset):
        def __init__(self, path):
            self.path = path
            self.h5 = None

        def __len__(self):
            return N

        def __getitem__(self, i):
            if self.h5 is None:
                self.h5 = h5py.File(self.path, 'r')
            img = self.h5[str(i)][()]
            label = self.h5['labels'][i]
            return torch.from_numpy(img).permute(2, 0, 1).float() / 255.0, int(label)

    torch.manual_seed(1)
    loader = DataLoader(H5Images(os.path.join(data, 'train.h5')), batch_size=32, shuffle=True,
                        num_workers=2)
    for _ in range(2):
        for x, y in loader:
            time.sleep(0.004)


if __name__ == '__main__':
    {'make': make, 'run': run}[sys.argv[1]](sys.argv[2])
