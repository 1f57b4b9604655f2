"""What the PyTorch Lightning-style programs share (lightning_ckpt, lightning_steps_ckpt): `make DIR`
writes DIR/data/sample_<i>.npy (256 x 256 float32) untraced; `run DIR` is the traced loop: a
map-style Dataset that np.loads one .npy per sample, a DataLoader (shuffle, batch 4), 3 epochs of
an MLP trained with Adam and a 5 ms step, and torch.save of a nested dict (state_dict,
optimizer_states, epoch, global_step) into DIR/ckpt/ named as Lightning's ModelCheckpoint names
its files, epoch=<e>-step=<s>.ckpt (<e> the epoch the save happens in, from 0; <s> the global
step), every file kept.
"""
import glob
import os
import sys
import time

import numpy as np

CKPT = 'ckpt'


def make(d, files, seed):
    os.makedirs(os.path.join(d, 'data'), exist_ok=True)
    rng = np.random.default_rng(seed)
    for i in range(files):
        np.save(os.path.join(d, 'data', 'sample_%03d.npy' % i), rng.random((256, 256), dtype=np.float32))


def run(d, num_workers, every_n_train_steps):
    """Saves after every `every_n_train_steps` steps (ModelCheckpoint(every_n_train_steps=N):
    several saves an epoch, none at its end), or with 0 once at each epoch's end."""
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
    loader = DataLoader(Npy(files), batch_size=4, shuffle=True, num_workers=num_workers)
    ckpt = os.path.join(d, CKPT)
    os.makedirs(ckpt, exist_ok=True)

    def save(epoch, step):
        torch.save({'epoch': epoch, 'global_step': step, 'state_dict': model.state_dict(),
                    'optimizer_states': [opt.state_dict()], 'lr_schedulers': []},
                   os.path.join(ckpt, 'epoch=%d-step=%d.ckpt' % (epoch, step)))

    step = 0
    for epoch in range(3):
        for x in loader:
            opt.zero_grad()
            model(x.mean(dim=1)).sum().backward()
            opt.step()
            time.sleep(0.005)
            step += 1
            # ModelCheckpoint.on_train_batch_end: a save when the global step is a multiple of N.
            if every_n_train_steps and step % every_n_train_steps == 0:
                save(epoch, step)
        if not every_n_train_steps:
            save(epoch, step)


def main(files, seed, num_workers, every_n_train_steps):
    if sys.argv[1] == 'make':
        make(sys.argv[2], files, seed)
    else:
        run(sys.argv[2], num_workers, every_n_train_steps)
