"""A training loop that reads npz samples (np.load, batch 2) and checkpoints its model with
torch.save every 8 steps, 32 steps in all, with a 5 ms emulated step.

  torch_save_ckpt.py make DIR   writes DIR/train/img_<i>_of_16.npz (x: 512 KiB of float32)
  torch_save_ckpt.py run DIR    trains, writing DIR/checkpoints/model-<step>.pt
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
    rng = np.random.default_rng(5)
    for p in paths(data):
        np.savez(p, x=rng.random((128, 1024), dtype=np.float32), y=np.zeros(1, np.int64))


def run(data):
    import torch

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(1024, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 10))
    ckpt = os.path.join(data, 'checkpoints')
    os.makedirs(ckpt, exist_ok=True)
    files = paths(data)
    for step in range(1, 33):
        for k in range(2):
            with np.load(files[(2 * step + k) % FILES]) as z:
                z['x'].sum()
        time.sleep(0.005)
        if step % 8 == 0:
            torch.save(model.state_dict(), os.path.join(ckpt, 'model-%d.pt' % step))


if __name__ == '__main__':
    {'make': make, 'run': run}[sys.argv[1]](sys.argv[2])
