"""A training loop that checkpoints as DeepSpeed (ZeRO stage 1, one rank) lays its checkpoints out,
and resumes from the newest one at start, written from how DeepSpeed's engine saves and loads
(deepspeed/runtime/engine.py: save_checkpoint, load_checkpoint).

A small MLP trained with Adam and a StepLR schedule reads npy samples with a DataLoader (batch 4,
no workers; labels from the sample index, as synthetic benchmarks make them), 6 ms of emulated
compute per step, 24 steps. Every 8 steps:

  DIR/checkpoints/global_step<N>/mp_rank_00_model_states.pt
      torch.save({'module': model.state_dict(), 'buffer_names': [], 'optimizer': None,
                  'lr_scheduler': ..., 'global_steps': N, 'global_samples': ..., ...})
  DIR/checkpoints/global_step<N>/zero_pp_rank_0_mp_rank_00_optim_states.pt
      torch.save({'optimizer_state_dict': Adam's state_dict() (exp_avg and exp_avg_sq per
                  parameter, a step tensor), 'ds_config': ..., 'ds_version': ...})
  DIR/checkpoints/latest: the tag "global_step<N>"

At start, when DIR/checkpoints/latest exists, both files of that tag are loaded with torch.load
and training continues from its step (make writes a first checkpoint at step 8, so every run
resumes from it: 16 more steps, checkpoints at 16 and 24).

  deepspeed_save_resume.py make DIR   writes DIR/train/x_<i>.npy (64 KiB of float32) and the
                                      checkpoint of step 8
  deepspeed_save_resume.py run DIR    resumes, trains and checkpoints
"""
import os
import sys
import time

import numpy as np

FILES = 64
FEATURES = 16384  # 64 KiB of float32 per sample
SAVE_EVERY = 8
LAST_STEP = 24
DS_CONFIG = {'train_batch_size': 4, 'optimizer': {'type': 'Adam', 'params': {'lr': 1e-3}},
             'zero_optimization': {'stage': 1}, 'steps_per_print': 10}
DS_VERSION = '0.9.5'


def sample_path(data, i):
    return os.path.join(data, 'train', 'x_%d.npy' % i)


def build():
    import torch

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(FEATURES, 64), torch.nn.ReLU(),
                                torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=10, gamma=0.5)
    return model, opt, sched


def save_checkpoint(ckpt, model, opt, sched, step):
    import torch

    tag = 'global_step%d' % step
    folder = os.path.join(ckpt, tag)
    os.makedirs(folder, exist_ok=True)
    torch.save({'module': model.state_dict(), 'buffer_names': [], 'optimizer': None,
                'lr_scheduler': sched.state_dict(), 'sparse_tensor_module_names': set(),
                'skipped_steps': 0, 'global_steps': step, 'global_samples': step * 4,
                'dp_world_size': 1, 'mp_world_size': 1, 'ds_config': DS_CONFIG,
                'ds_version': DS_VERSION},
               os.path.join(folder, 'mp_rank_00_model_states.pt'))
    torch.save({'optimizer_state_dict': opt.state_dict(), 'ds_config': DS_CONFIG,
                'ds_version': DS_VERSION},
               os.path.join(folder, 'zero_pp_rank_0_mp_rank_00_optim_states.pt'))
    with open(os.path.join(ckpt, 'latest'), 'w') as f:
        f.write(tag)


def load_checkpoint(ckpt, model, opt, sched):
    import torch

    latest = os.path.join(ckpt, 'latest')
    if not os.path.exists(latest):
        return 0
    with open(latest) as f:
        tag = f.read().strip()
    states = torch.load(os.path.join(ckpt, tag, 'mp_rank_00_model_states.pt'))
    model.load_state_dict(states['module'])
    sched.load_state_dict(states['lr_scheduler'])
    optim = torch.load(os.path.join(ckpt, tag, 'zero_pp_rank_0_mp_rank_00_optim_states.pt'))
    opt.load_state_dict(optim['optimizer_state_dict'])
    return states['global_steps']


class Samples:
    def __init__(self, data):
        self.data = data

    def __len__(self):
        return FILES

    def __getitem__(self, i):
        import torch

        return torch.from_numpy(np.load(sample_path(self.data, i))), i % 10


def train(data, last_step):
    import torch

    model, opt, sched = build()
    ckpt = os.path.join(data, 'checkpoints')
    step = load_checkpoint(ckpt, model, opt, sched)
    loader = torch.utils.data.DataLoader(Samples(data), batch_size=4, shuffle=False)
    while step < last_step:
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            time.sleep(0.006)
            step += 1
            if step % SAVE_EVERY == 0:
                save_checkpoint(ckpt, model, opt, sched, step)
            if step >= last_step:
                break


def make(data):
    os.makedirs(os.path.join(data, 'train'), exist_ok=True)
    rng = np.random.default_rng(26)
    for i in range(FILES):
        np.save(sample_path(data, i), rng.random(FEATURES, dtype=np.float32))
    train(data, SAVE_EVERY)


def run(data):
    train(data, LAST_STEP)


if __name__ == '__main__':
    {'make': make, 'run': run}[sys.argv[1]](sys.argv[2])
