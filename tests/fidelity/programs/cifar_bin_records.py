"""CIFAR-10's binary version: data_batch_1.bin ... data_batch_5.bin, each a run of fixed records
(1 label byte, then 3,072 pixel bytes), here 1,000 records a file. A map-style Dataset indexes the
records across the files and reads one with `f.seek(k * 3073); f.read(3073)` on a file it keeps
open per worker (Python's buffered reader), as ports of the TensorFlow CIFAR-10 reader do; a
DataLoader (2 workers, shuffle, batch 64), 2 epochs, a 5 ms step.

  cifar_bin_records.py make DIR   writes DIR/cifar-10-batches-bin/
  cifar_bin_records.py run DIR    trains over it
"""
import os
import sys
import time

import numpy as np

FILES = 5
PER_FILE = 1000
REC = 3073


def make(data):
    d = os.path.join(data, 'cifar-10-batches-bin')
    os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(10)
    for b in range(FILES):
        recs = rng.integers(0, 255, (PER_FILE, REC), dtype=np.uint8)
        recs[:, 0] %= 10
        with open(os.path.join(d, 'data_batch_%d.bin' % (b + 1)), 'wb') as f:
            f.write(recs.tobytes())


def run(data):
    import torch
    from torch.utils.data import DataLoader, Dataset

    d = os.path.join(data, 'cifar-10-batches-bin')

    class CifarBin(Dataset):
        def __init__(self):
            self.paths = [os.path.join(d, 'data_batch_%d.bin' % (b + 1)) for b in range(FILES)]
            self.files = {}

        def __len__(self):
            return FILES * PER_FILE

        def __getitem__(self, i):
            b, k = divmod(i, PER_FILE)
            f = self.files.get(b)
            if f is None:
                f = self.files[b] = open(self.paths[b], 'rb')
            f.seek(k * REC)
            rec = np.frombuffer(f.read(REC), dtype=np.uint8)
            img = torch.from_numpy(rec[1:].reshape(3, 32, 32).astype(np.float32) / 255.0)
            return img, int(rec[0])

    torch.manual_seed(2)
    loader = DataLoader(CifarBin(), batch_size=64, shuffle=True, num_workers=2)
    for _ in range(2):
        for x, y in loader:
            time.sleep(0.005)


if __name__ == '__main__':
    {'make': make, 'run': run}[sys.argv[1]](sys.argv[2])
