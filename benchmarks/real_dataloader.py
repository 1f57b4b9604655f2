"""A real PyTorch input loop over a folder of .npz (or .hdf5) files, the yardstick dlio's pytorch emulation
is measured against (benchmarks/side_by_side.sh): a Dataset whose __getitem__ np.loads one file
(its 'x' array, as DLIO's NPZReader does) and returns it as a tensor, a DataLoader with fork worker
processes (persistent, as DLIO's PyTorch loader), shuffle, no compute step.

  /usr/bin/python3 benchmarks/real_dataloader.py DIR --workers 4 --batch 4 --epochs 3 [--files N]
      [--prefetch-factor 2] [--collate-bytes N] [--json OUT.json]

DIR holds the .npz files (e.g. a dlio dataset's train/ folder; the first N in name order).
--format hdf5 reads .hdf5 files instead, as DLIO's HDF5 reader does: one sample is one row of the
file's 'records' dataset, read with h5py (the file opened in __getitem__ and closed after it).
Prints one line, samples/s as the mean over epochs of samples / epoch time (an epoch from asking
for its first batch to receiving its last, the workers' start in epoch 1 included, as dlio's and
DLIO's epoch 1 include theirs); --json writes the per-epoch figures too. --collate-bytes N hands
the loader only the first N bytes of each loaded array (np.load still reads all of it), as DLIO's
readers hand it dataset.record_length_bytes_resize bytes: the collate then copies N bytes a sample.
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.dataloader import default_collate


class NpzFiles(Dataset):
    def __init__(self, paths, collate_bytes=0):
        self.paths = paths
        self.collate_bytes = collate_bytes

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        with np.load(self.paths[i]) as z:
            x = z['x']
        if self.collate_bytes:
            x = x.reshape(-1).view(np.uint8)[:self.collate_bytes]
        return torch.from_numpy(x)


class Hdf5Rows(Dataset):
    def __init__(self, paths, collate_bytes=0):
        import h5py
        self.h5py = h5py
        self.rows = []
        for p in paths:
            with h5py.File(p, 'r') as f:
                self.rows += [(p, j) for j in range(f['records'].shape[0])]
        self.collate_bytes = collate_bytes

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        path, j = self.rows[i]
        with self.h5py.File(path, 'r') as f:
            x = f['records'][j]
        if self.collate_bytes:
            x = x.reshape(-1).view(np.uint8)[:self.collate_bytes]
        return torch.from_numpy(x)


def collate(batch):
    # Samples of unequal shapes (record_length_bytes_stdev > 0) cannot be stacked: keep a list.
    if all(t.shape == batch[0].shape for t in batch):
        return default_collate(batch)
    return batch


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('dir')
    ap.add_argument('--workers', type=int, default=4)
    ap.add_argument('--batch', type=int, default=1)
    ap.add_argument('--epochs', type=int, default=3)
    ap.add_argument('--files', type=int, default=0, help='use the first N files (0: all)')
    ap.add_argument('--prefetch-factor', type=int, default=2)
    ap.add_argument('--collate-bytes', type=int, default=0)
    ap.add_argument('--json', default='')
    ap.add_argument('--format', choices=['npz', 'hdf5'], default='npz')
    a = ap.parse_args()
    ext = ('.hdf5', '.h5') if a.format == 'hdf5' else ('.npz',)  # DLIO's names, dlio's
    paths = sorted(os.path.join(a.dir, f) for f in os.listdir(a.dir) if f.endswith(ext))
    if a.files:
        paths = paths[:a.files]
    if not paths:
        sys.exit('%s: no %s files' % (a.dir, ' or '.join(ext)))
    torch.manual_seed(7)
    dataset = (Hdf5Rows if a.format == 'hdf5' else NpzFiles)(paths, a.collate_bytes)
    loader = DataLoader(dataset, batch_size=a.batch, shuffle=True,
                        num_workers=a.workers, collate_fn=collate,
                        persistent_workers=a.workers > 0,
                        prefetch_factor=a.prefetch_factor if a.workers > 0 else 2,
                        multiprocessing_context='fork' if a.workers > 0 else None)
    epochs = []
    for _ in range(a.epochs):
        n = 0
        t0 = time.perf_counter()
        for x in loader:
            n += x.shape[0] if isinstance(x, torch.Tensor) else len(x)
        epochs.append({'samples': n, 'seconds': time.perf_counter() - t0})
    rates = [e['samples'] / e['seconds'] for e in epochs]
    mean = sum(rates) / len(rates)
    print('%.2f samples/s (epochs: %s)' % (mean, ', '.join('%.1f' % r for r in rates)))
    if a.json:
        with open(a.json + '.tmp', 'w') as f:
            json.dump({'samples_per_second': mean, 'epochs': epochs, 'files': len(paths),
                       'workers': a.workers, 'batch': a.batch,
                       'collate_bytes': a.collate_bytes}, f)
        os.replace(a.json + '.tmp', a.json)


if __name__ == '__main__':
    main()
