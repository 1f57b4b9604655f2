"""An I/O-bound PyTorch input loop: a Dataset that np.loads one 4 MiB npz file per sample and
does nothing else with it, a DataLoader with 2 fork workers, shuffle and batch 4, 2 epochs, a
1 ms emulated step. The workers spend most of their time reading, yet part of each np.load
reads into fresh pages the kernel clears inside the read (about 9% of the pages: glibc reuses its
heap for the rest): `dlio-run fit` chooses reader.client_costs framework, client-bound inside
its reads.

  torch_npz_large.py make DIR   writes DIR/train/img_<i>_of_16.npz (x: 4 MiB of uint8)
  torch_npz_large.py run DIR    trains over them
"""
import numpy as np

import npz_dataloader

if __name__ == '__main__':
    npz_dataloader.main(files=16, array=lambda rng: rng.integers(0, 255, (2048, 2048), dtype=np.uint8),
                        batch_size=4, step_s=0.001)
