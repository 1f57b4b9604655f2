"""An h5py patch loader: each step reads a random chunk-sized crop of a chunked 3-D volume, at a
position taken from a small coordinates dataset in the same file (as patch-based segmentation
loaders do), 4 files opened once, 200 steps of batch 1 with a 2 ms emulated step.

  h5py_crops.py make DIR   writes DIR/train/vol_<i>_of_4.h5: `volume` (128^3 uint8, chunks 32^3)
                           and `coords` (64 x 3 int32 chunk origins)
  h5py_crops.py run DIR    reads 200 crops
"""
import os
import sys
import time

import h5py
import numpy as np

FILES = 4
EDGE = 128
CHUNK = 32


def paths(data):
    return [os.path.join(data, 'train', 'vol_%d_of_%d.h5' % (i, FILES)) for i in range(FILES)]


def make(data):
    os.makedirs(os.path.join(data, 'train'), exist_ok=True)
    rng = np.random.default_rng(2)
    for p in paths(data):
        with h5py.File(p, 'w') as f:
            f.create_dataset('volume', data=rng.integers(0, 255, (EDGE,) * 3, dtype=np.uint8),
                             chunks=(CHUNK,) * 3)
            grid = EDGE // CHUNK
            origins = rng.integers(0, grid, (64, 3)) * CHUNK
            f.create_dataset('coords', data=origins.astype(np.int32))


def run(data):
    rng = np.random.default_rng(3)
    files = [h5py.File(p, 'r') for p in paths(data)]
    for _ in range(200):
        f = files[rng.integers(len(files))]
        c = f['coords'][rng.integers(len(f['coords']))]
        crop = f['volume'][c[0]:c[0] + CHUNK, c[1]:c[1] + CHUNK, c[2]:c[2] + CHUNK]
        assert crop.shape == (CHUNK,) * 3
        # The "training step": 10 ms, which stands out from the reads' gaps even on a loaded
        # 2-core host (2 ms did not at load 5: fit then saw no steps and read every sample).
        time.sleep(0.01)
    for f in files:
        f.close()


if __name__ == '__main__':
    {'make': make, 'run': run}[sys.argv[1]](sys.argv[2])
