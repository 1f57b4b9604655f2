"""A client-bound PyTorch input loop: a Dataset that np.loads one small npz file per sample and
then transforms it at length in numpy (FFTs, sorts: ~15 ms of CPU a sample, against well under
a millisecond of reading), a DataLoader with 2 fork workers, shuffle and batch 4, 2 epochs, a
1 ms emulated step. The workers' own work sets the pace: the loop waits for data while the
storage is idle, and `dlio-run fit` chooses reader.client_costs framework.

  torch_npz_augment.py make DIR   writes DIR/train/img_<i>_of_16.npz (x: 256 KiB of float32)
  torch_npz_augment.py run DIR    trains over them
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
        np.savez(p, x=rng.standard_normal((256, 256)).astype(np.float32), y=np.zeros(1, np.int64))


def augment(x):
    y = x.astype(np.float64)
    for _ in range(6):
        y = np.sort(np.abs(np.fft.irfft2(np.fft.rfft2(y), s=y.shape)), axis=1)
    return y.astype(np.float32)


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
                x, y = z['x'], int(z['y'][0])
            return torch.from_numpy(augment(x)), y

    torch.manual_seed(7)
    loader = DataLoader(Npz(), batch_size=4, shuffle=True, num_workers=2)
    for _ in range(2):
        for x, _ in loader:
            time.sleep(0.001)


if __name__ == '__main__':
    {'make': make, 'run': run}[sys.argv[1]](sys.argv[2])
