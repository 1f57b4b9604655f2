"""Per-sample pickles: a map-style Dataset whose __getitem__ unpickles one file (a dict of a
float32 image of 96 KiB and an int label), DataLoader with 2 workers, shuffle, batch 8, 2 epochs,
a 3 ms step.

  pickle_samples.py make DIR   writes DIR/samples/<i>.pkl (120 files)
  pickle_samples.py run DIR    trains over them
"""
import os
import pickle
import sys
import time

import numpy as np

N = 120


def path(data, i):
    return os.path.join(data, 'samples', '%06d.pkl' % i)


def make(data):
    os.makedirs(os.path.join(data, 'samples'), exist_ok=True)
    rng = np.random.default_rng(3)
    for i in range(N):
        with open(path(data, i), 'wb') as f:
            pickle.dump({'image': rng.random((3, 64, 128), dtype=np.float32), 'label': i % 10}, f,
                        protocol=pickle.HIGHEST_PROTOCOL)


def run(data):
    import torch
    from torch.utils.data import DataLoader, Dataset

    class Pickles(Dataset):
        def __len__(self):
            return N

        def __getitem__(self, i):
            with open(path(data, i), 'rb') as f:
                d = pickle.load(f)
            return torch.from_numpy(d['image']), d['label']

    torch.manual_seed(0)
    loader = DataLoader(Pickles(), batch_size=8, shuffle=True, num_workers=2)
    for _ in range(2):
        for x, y in loader:
            time.sleep(0.003)


if __name__ == '__main__':
    {'make': make, 'run': run}[sys.argv[1]](sys.argv[2])
