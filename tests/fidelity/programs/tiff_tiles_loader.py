"""Microscopy/remote-sensing style: 64 uncompressed 16-bit grayscale TIFF images of 256 x 256
(written by Pillow, 8 KiB strips), opened with PIL.Image.open and decoded with np.asarray per
sample in a DataLoader (2 workers, shuffle, batch 8), a random 128 x 128 crop, 3 epochs, a 4 ms
step.

  tiff_tiles_loader.py make DIR   writes DIR/tiles/tile_<i>.tif
  tiff_tiles_loader.py run DIR    trains over them
"""
import os
import sys
import time

import numpy as np

N = 64


def path(data, i):
    return os.path.join(data, 'tiles', 'tile_%03d.tif' % i)


def make(data):
    from PIL import Image
    os.makedirs(os.path.join(data, 'tiles'), exist_ok=True)
    rng = np.random.default_rng(4)
    for i in range(N):
        Image.fromarray(rng.integers(0, 4096, (256, 256), dtype=np.uint16)).save(path(data, i))


def run(data):
    import torch
    from PIL import Image
    from torch.utils.data import DataLoader, Dataset

    class Tiles(Dataset):
        def __len__(self):
            return N

        def __getitem__(self, i):
            with Image.open(path(data, i)) as im:
                a = np.asarray(im, dtype=np.uint16)
            y, x = np.random.randint(0, 128, 2)
            return torch.from_numpy(a[y:y + 128, x:x + 128].astype(np.float32)), i % 5

    torch.manual_seed(0)
    loader = DataLoader(Tiles(), batch_size=8, shuffle=True, num_workers=2)
    for _ in range(3):
        for x, y in loader:
            time.sleep(0.004)


if __name__ == '__main__':
    {'make': make, 'run': run}[sys.argv[1]](sys.argv[2])
