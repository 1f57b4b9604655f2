"""A PyTorch training input loop over .npz files: a Dataset that np.loads one file per sample, a
DataLoader with 2 fork workers, shuffle and batch 4, 2 epochs, a 5 ms emulated step.

  torch_npz_loader.py make DIR   writes DIR/train/img_<i>_of_16.npz (x: 1 MiB of uint8, y: label)
  torch_npz_loader.py run DIR    trains over them
"""
import numpy as np

import npz_dataloader

if __name__ == '__main__':
    npz_dataloader.main(files=16, array=lambda rng: rng.integers(0, 255, (1024, 1024), dtype=np.uint8),
                        batch_size=4, step_s=0.005)
