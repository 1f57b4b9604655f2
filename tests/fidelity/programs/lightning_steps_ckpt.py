"""A Lightning-style training loop that checkpoints every N training steps: a map-style Dataset
that np.loads one .npy per sample, a DataLoader that loads in the training process
(num_workers=0, as Trainer runs with it), shuffle, batch 4 (10 steps an epoch), 3 epochs, a 5 ms
step with Adam; after every 4th training step (global step 4, 8, 12, ...: several saves an epoch,
none at an epoch's end) one checkpoint file named as Lightning's
ModelCheckpoint(every_n_train_steps=4, save_top_k=-1) names them, ckpt/epoch=<e>-step=<s>.ckpt
with <e> the epoch the save happens in (from 0) and <s> the global step, every file kept, holding a
nested dict (state_dict, optimizer_states, epoch, global_step). The loop is lightning_loop.py's.

In the training process: with DataLoader workers reading batches ahead, the pauses between reads
do not tell the steps apart well enough for `dlio-run fit` to place saves every few steps
(docs/fidelity.md, "Lightning checkpoints every N steps").

  lightning_steps_ckpt.py make DIR
  lightning_steps_ckpt.py run DIR
"""
import lightning_loop

# closed_loop.sh: the emulation's checkpoint folder must hold exactly this folder's file names.
CHECKPOINT_NAMES = 'ckpt'

if __name__ == '__main__':
    lightning_loop.main(files=40, seed=5, num_workers=0, every_n_train_steps=4)
