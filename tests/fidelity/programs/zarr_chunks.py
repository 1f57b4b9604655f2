"""A chunked array in a directory store, as zarr v2 lays it out (one file per chunk, named by its
chunk index, zlib-compressed, a .zarray JSON beside): an array of 2,048 x 64 x 64 float32 in
chunks of 16 x 64 x 64; a Dataset reads sample i by opening and reading the chunk file that holds
it whole and decompressing it (no chunk cache, as a plain zarr read of one row does); 2
DataLoader workers, shuffle, batch 32, 2 epochs, a 3 ms step.

  zarr_chunks.py make DIR   writes DIR/volume.zarr/{.zarray,<c>.0.0}
  zarr_chunks.py run DIR    trains over it
"""
import json
import os
import sys
import time
import zlib

import numpy as np

N, ROWS, SHAPE = 2048, 16, (64, 64)


def store(data):
    return os.path.join(data, 'volume.zarr')


def make(data):
    os.makedirs(store(data), exist_ok=True)
    rng = np.random.default_rng(9)
    with open(os.path.join(store(data), '.zarray'), 'w') as f:
        json.dump({'zarr_format': 2, 'shape': [N, *SHAPE], 'chunks': [ROWS, *SHAPE],
                   'dtype': '<f4', 'compressor': {'id': 'zlib', 'level': 1}, 'order': 'C',
                   'fill_value': 0, 'filters': None}, f)
    for c in range(N // ROWS):
        block = np.round(rng.normal(0, 1, (ROWS, *SHAPE)), 2).astype(np.float32)
        with open(os.path.join(store(data), '%d.0.0' % c), 'wb') as f:
            f.write(zlib.compress(block.tobytes(), 1))


def run(data):
    import torch
    from torch.utils.data import DataLoader, Dataset

    class Rows(Dataset):
        def __init__(self):
            with open(os.path.join(store(data), '.zarray')) as f:
                self.meta = json.load(f)

        def __len__(self):
            return N

        def __getitem__(self, i):
            with open(os.path.join(store(data), '%d.0.0' % (i // ROWS)), 'rb') as f:
                raw = zlib.decompress(f.read())
            block = np.frombuffer(raw, dtype=np.float32).reshape(ROWS, *SHAPE)
            return torch.from_numpy(block[i % ROWS].copy()), i % 7

    torch.manual_seed(0)
    loader = DataLoader(Rows(), batch_size=32, shuffle=True, num_workers=2)
    for _ in range(2):
        for x, y in loader:
            time.sleep(0.003)


if __name__ == '__main__':
    {'make': make, 'run': run}[sys.argv[1]](sys.argv[2])
