"""A Lightning-style training loop: a map-style Dataset that np.loads one .npy per sample, a
DataLoader with 2 workers, shuffle, batch 4, 3 epochs, a 5 ms step with Adam; at the end of each
epoch one checkpoint file named as Lightning's ModelCheckpoint names them,
ckpt/epoch=<e>-step=<s>.ckpt, holding a nested dict (state_dict, optimizer_states, epoch,
global_step).

  lightning_style_ckpt.py make DIR
  lightning_style_ckpt.py run DIR
"""
import glob
import os
import sys
import time

import numpy as np

FILES = 24


def make(d):
    os.makedirs(os.path.join(d, 'data'), exist_ok=True)
    rng = np.random.default_rng(3)
    for i in range(FILES):
        np.save(os.path.join(d, 'data', 'sample_%03d.npy' % i), rng.random((256, 256), dtype=np.float32))


def run(d):
    import torch
    from torch.utils.data import DataLoader, Dataset

    class Npy(Dataset):
        def __init__(self, files):
            self.files = files

        def __len__(self):
            return len(self.files)

        def __getitem__(self, i):
            return torch.from_numpy(np.load(self.files[i]))

    files = sorted(glob.glob(os.path.join(d, 'data', '*.npy')))
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 384), torch.nn.ReLU(), torch.nn.Linear(384, 256))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loader = DataLoader(Npy(files), batch_size=4, shuffle=True, num_workers=2)
    ckpt = os.path.join(d, 'ckpt')
    os.makedirs(ckpt, exist_ok=True)
    step = 0
    for epoch in range(3):
        for x in loader:
            opt.zero_grad()
            model(x.mean(dim=1)).sum().backward()
            opt.step()
            time.sleep(0.005)
            step += 1
        torch.save({'epoch': epoch, 'global_step': step, 'state_dict': model.state_dict(),
                    'optimizer_states': [opt.state_dict()], 'lr_schedulers': []},
                   os.path.join(ckpt, 'epoch=%d-step=%d.ckpt' % (epoch, step)))


if __name__ == '__main__':
    {'make': make, 'run': run}[sys.argv[1]](sys.argv[2])
