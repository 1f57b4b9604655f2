"""A PyTorch training input loop over .npz files: a Dataset that np.loads one file per sample, a
DataLoader with 2 fork workers, shuffle and batch 4, 2 epochs, a 5 ms emulated step.

  torch_npz_loader.py make DIR   writes DIR/train/img_<i>_of_16.npz (x: 1 MiB of uint8, y: label)
  torch_npz_loader.py run DIR    trains over them
"""
import os
import sys
import time

import numpy as np

FILES = 16


def paths(data):
    return [os.path.join(data, 'train', 'img_%d_of_%d.npz' % (i, FILES)) for i in range(FILES)]


def make(data):
    os.makedirs(os.path.join(data, 'train'), exist_ok=True)
    rng = np.random.default_rng(1)
    for p in paths(data):
        np.savez(p, x=rng.integers(0, 255, (1024, 1024), dtype=np.uint8), y=np.zeros(1, np.int64))


def run(data):
    import torch
    from torch.utils.data import DataLoader, Dataset

    class Npz(Dataset):
        def __init__(self):
            self.paths = paths(data)

        def __len__(self):
            return len(self.paths)

        def __getitem__(self, i):
            with np.load(self.paths[i]) as z:
                return torch.from_numpy(z['x']), int(z['y'][0])

    torch.manual_seed(7)
    loader = DataLoader(Npz(), batch_size=4, shuffle=True, num_workers=2)
    for _ in range(2):
        for x, _ in loader:
            time.sleep(0.005)


if __name__ == '__main__':
    {'make': make, 'run': run}[sys.argv[1]](sys.argv[2])
