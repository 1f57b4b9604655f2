"""An HDF5 file of gzip-compressed, chunked images (one image a chunk, as h5py writes
compression='gzip' with chunks=(1, H, W)), read by a Dataset that opens the file lazily per
worker and reads dset[i]; 256 images of 128 x 128 float32, 2 workers, shuffle, batch 8, 2 epochs,
a 3 ms step.

  h5_gzip_chunks.py make DIR   writes DIR/images.h5
  h5_gzip_chunks.py run DIR    trains over it
"""
import os
import sys
import time

import numpy as np

N, H, W = 256, 128, 128


def make(data):
    import h5py
    os.makedirs(data, exist_ok=True)
    rng = np.random.default_rng(8)
    with h5py.File(os.path.join(data, 'images.h5'), 'w') as f:
        imgs = (rng.random((N, H, W), dtype=np.float32) * 16).round()  # compressible
        f.create_dataset('images', data=imgs, chunks=(1, H, W), compression='gzip')
        f.create_dataset('labels', data=np.arange(N) % 10)


def run(data):
    import h5py
    import torch
    from torch.utils.data import DataLoader, Dataset

    class Images(Dataset):
        def __init__(self):
            self.f = None

        def __len__(self):
            return N

        def __getitem__(self, i):
            if self.f is None:
                self.f = h5py.File(os.path.join(data, 'images.h5'), 'r')
            return torch.from_numpy(self.f['images'][i]), int(self.f['labels'][i])

    torch.manual_seed(0)
    loader = DataLoader(Images(), batch_size=8, shuffle=True, num_workers=2)
    for _ in range(2):
        for x, y in loader:
            time.sleep(0.003)


if __name__ == '__main__':
    {'make': make, 'run': run}[sys.argv[1]](sys.argv[2])
