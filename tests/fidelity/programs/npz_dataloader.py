"""What the PyTorch DataLoader programs over npz files share (torch_npz_loader, torch_npz_augment,
torch_npz_large): `make DIR` writes DIR/train/img_<i>_of_<n>.npz (x: the program's array, y: a
label) untraced; `run DIR` is the traced loop: a Dataset that np.loads one file per sample (and
transforms x, when the program does), a DataLoader with 2 fork workers and shuffle, 2 epochs, a
sleep per batch for the step.
"""
import os
import sys
import time

import numpy as np


def paths(data, files):
    return [os.path.join(data, 'train', 'img_%d_of_%d.npz' % (i, files)) for i in range(files)]


def make(data, files, array):
    os.makedirs(os.path.join(data, 'train'), exist_ok=True)
    rng = np.random.default_rng(1)
    for p in paths(data, files):
        np.savez(p, x=array(rng), y=np.zeros(1, np.int64))


def run(data, files, batch_size, step_s, transform):
    import torch
    from torch.utils.data import DataLoader, Dataset

    class Npz(Dataset):
        def __init__(self):
            self.paths = paths(data, files)

        def __len__(self):
            return len(self.paths)

        def __getitem__(self, i):
            with np.load(self.paths[i]) as z:
                x, y = z['x'], int(z['y'][0])
            return torch.from_numpy(transform(x) if transform else x), y

    torch.manual_seed(7)
    loader = DataLoader(Npz(), batch_size=batch_size, shuffle=True, num_workers=2)
    for _ in range(2):
        for _ in loader:
            time.sleep(step_s)


def main(files, array, batch_size, step_s, transform=None):
    """Runs `make DIR` or `run DIR` as sys.argv asks."""
    command, data = sys.argv[1], sys.argv[2]
    if command == 'make':
        make(data, files, array)
    else:
        run(data, files, batch_size, step_s, transform)
