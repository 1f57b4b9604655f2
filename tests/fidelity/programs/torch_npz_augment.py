"""A client-bound PyTorch input loop: a Dataset that np.loads one small npz file per sample and
then transforms it at length in numpy (FFTs, sorts: ~15 ms of CPU a sample, against well under
a millisecond of reading), a DataLoader with 2 fork workers, shuffle and batch 4, 2 epochs, a
1 ms emulated step. The workers' own work sets the pace: the loop waits for data while the
storage is idle, and `dlio-run fit` chooses reader.client_costs framework.

  torch_npz_augment.py make DIR   writes DIR/train/img_<i>_of_16.npz (x: 256 KiB of float32)
  torch_npz_augment.py run DIR    trains over them
"""
import numpy as np

import npz_dataloader


def augment(x):
    y = x.astype(np.float64)
    for _ in range(6):
        y = np.sort(np.abs(np.fft.irfft2(np.fft.rfft2(y), s=y.shape)), axis=1)
    return y.astype(np.float32)


if __name__ == '__main__':
    npz_dataloader.main(files=16, array=lambda rng: rng.standard_normal((256, 256)).astype(np.float32),
                        batch_size=4, step_s=0.001, transform=augment)
