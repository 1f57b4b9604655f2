"""A Lightning-style training loop that checkpoints every N training steps: a map-style Dataset
that np.loads one .npy per sample, a DataLoader that loads in the training process
(num_workers=0, as Trainer runs with it), shuffle, batch 4 (10 steps an epoch), 3 epochs, a 5 ms
step with Adam; after every 4th training step (global step 4, 8, 12, ...:
several saves an epoch, none at an epoch's end) one checkpoint file named as Lightning's
ModelCheckpoint(every_n_train_steps=4, save_top_k=-1) names them, ckpt/epoch=<e>-step=<s>.ckpt
with <e> the epoch the save happens in (from 0) and <s> the global step, every file kept, holding a
nested dict (state_dict, optimizer_states, epoch, global_step).

  lightning_steps_ckpt.py make DIR
  lightning_steps_ckpt.py run DIR
"""
import glob
import os
import sys
import time

import numpy as np

FILES = 40
EVERY_N_TRAIN_STEPS = 4
# closed_loop.sh: the emulation's checkpoint folder must hold exactly this folder's file names.
CHECKPOINT_NAMES = 'ckpt'


def make(d):
    os.makedirs(os.path.join(d, 'data'), exist_ok=True)
    rng = np.random.default_rng(5)
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
    # In the training process: with DataLoader workers reading batches ahead, the pauses between
    # reads do not tell the steps apart well enough for `dlio-run fit` to place saves every few
    # steps (docs/fidelity.md, "Lightning checkpoints every N steps").
    loader = DataLoader(Npy(files), batch_size=4, shuffle=True, num_workers=0)
    ckpt = os.path.join(d, CHECKPOINT_NAMES)
    os.makedirs(ckpt, exist_ok=True)
    global_step = 0
    for epoch in range(3):
        for x in loader:
            opt.zero_grad()
            model(x.mean(dim=1)).sum().backward()
            opt.step()
            time.sleep(0.005)
            global_step += 1
            # ModelCheckpoint.on_train_batch_end: a save when the global step is a multiple of
            # every_n_train_steps, named by the epoch it happens in and the global step.
            if global_step % EVERY_N_TRAIN_STEPS == 0:
                torch.save({'epoch': epoch, 'global_step': global_step,
                            'state_dict': model.state_dict(),
                            'optimizer_states': [opt.state_dict()], 'lr_schedulers': []},
                           os.path.join(ckpt, 'epoch=%d-step=%d.ckpt' % (epoch, global_step)))


if __name__ == '__main__':
    {'make': make, 'run': run}[sys.argv[1]](sys.argv[2])
