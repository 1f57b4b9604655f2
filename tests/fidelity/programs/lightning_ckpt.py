"""A Lightning-style training loop: a map-style Dataset that np.loads one .npy per sample, a
DataLoader with 2 workers, shuffle, batch 4, 3 epochs, a 5 ms step with Adam; at the end of each
epoch one checkpoint file named as Lightning's ModelCheckpoint names them,
ckpt/epoch=<e>-step=<s>.ckpt, holding a nested dict (state_dict, optimizer_states, epoch,
global_step). The loop is lightning_loop.py's.

  lightning_ckpt.py make DIR
  lightning_ckpt.py run DIR
"""
import lightning_loop

if __name__ == '__main__':
    lightning_loop.main(files=24, seed=3, num_workers=2, every_n_train_steps=0)
