"""SVHN-style MATLAB files read with scipy.io.loadmat in a PyTorch DataLoader whose workers are
spawned (`multiprocessing_context='spawn'`, as on macOS and Windows, and where CUDA forbids fork):
each sample is one .mat file of 64 32x32x3 uint8 images and their labels, loaded whole; 2 workers
re-spawned each epoch, shuffle, batch 4 files, 2 epochs, a 10 ms step.

  mat_spawn_loader.py make DIR   writes DIR/mats/part_<i>.mat
  mat_spawn_loader.py run DIR    trains over them
"""
import os
import sys
import time

import numpy as np

N = 48


def path(data, i):
    return os.path.join(data, 'mats', 'part_%03d.mat' % i)


def make(data):
    import scipy.io
    os.makedirs(os.path.join(data, 'mats'), exist_ok=True)
    rng = np.random.default_rng(2)
    for i in range(N):
        scipy.io.savemat(path(data, i), {
            'X': rng.integers(0, 255, (32, 32, 3, 64), dtype=np.uint8),
            'y': rng.integers(1, 11, (64, 1), dtype=np.uint8)})


class MatParts:
    def __init__(self, data):
        self.data = data

    def __len__(self):
        return N

    def __getitem__(self, i):
        import scipy.io
        import torch
        m = scipy.io.loadmat(path(self.data, i))
        return torch.from_numpy(m['X']).permute(3, 2, 0, 1), torch.from_numpy(m['y'][:, 0])


def run(data):
    import torch
    from torch.utils.data import DataLoader
    torch.manual_seed(0)
    loader = DataLoader(MatParts(data), batch_size=4, shuffle=True, num_workers=2,
                        multiprocessing_context='spawn')
    for _ in range(2):
        for x, y in loader:
            time.sleep(0.01)


if __name__ == '__main__':
    {'make': make, 'run': run}[sys.argv[1]](sys.argv[2])
