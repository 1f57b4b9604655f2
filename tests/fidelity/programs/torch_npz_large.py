"""An I/O-bound PyTorch input loop: a Dataset that np.loads one 4 MiB npz file per sample and
does nothing else with it, a DataLoader with 2 fork workers, shuffle and batch 2, 2 epochs, a
1 ms emulated step. The loop waits for data, and the workers spend most of their time reading
it: `dlio-run fit` leaves reader.client_costs at its default (none).

  torch_npz_large.py make DIR   writes DIR/train/img_<i>_of_12.npz (x: 4 MiB of uint8)
  torch_npz_large.py run DIR    trains over them
"""
import os
import sys
import time

import numpy as np

FILES = 12


def paths(data):
    return [os.path.join(data, 'train', 'img_%d_of_%d.npz' % (i, FILES)) for i in range(FILES)]


def make(data):
    os.makedirs(os.path.join(data, 'train'), exist_ok=True)
    rng = np.random.default_rng(1)
    for p in paths(data):
        np.savez(p, x=rng.integers(0, 255, (2048, 2048), dtype=np.uint8), y=np.zeros(1, np.int64))


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
    loader = DataLoader(Npz(), batch_size=2, shuffle=True, num_workers=2)
    for _ in range(2):
        for x, _ in loader:
            time.sleep(0.001)


if __name__ == '__main__':
    {'make': make, 'run': run}[sys.argv[1]](sys.argv[2])
