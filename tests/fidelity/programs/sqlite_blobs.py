"""Samples as BLOBs in an SQLite database: a map-style Dataset whose workers each open the
database lazily and SELECT one row per sample by its id; 600 rows of 24 KiB, 2 workers,
shuffle, batch 16, 2 epochs, a 2 ms step.

  sqlite_blobs.py make DIR   writes DIR/samples.db
  sqlite_blobs.py run DIR    trains over it
"""
import os
import sqlite3
import sys
import time

N, SIZE = 600, 24 * 1024


def make(data):
    os.makedirs(data, exist_ok=True)
    db = sqlite3.connect(os.path.join(data, 'samples.db'))
    db.execute('CREATE TABLE samples (id INTEGER PRIMARY KEY, label INTEGER, data BLOB)')
    rnd = os.urandom
    db.executemany('INSERT INTO samples VALUES (?, ?, ?)',
                   ((i, i % 10, rnd(SIZE)) for i in range(N)))
    db.commit()
    db.close()


def run(data):
    import torch
    from torch.utils.data import DataLoader, Dataset

    class Blobs(Dataset):
        def __init__(self):
            self.db = None

        def __len__(self):
            return N

        def __getitem__(self, i):
            if self.db is None:
                self.db = sqlite3.connect(os.path.join(data, 'samples.db'))
            label, blob = self.db.execute('SELECT label, data FROM samples WHERE id = ?',
                                          (int(i),)).fetchone()
            return torch.frombuffer(bytearray(blob[:64]), dtype=torch.uint8).sum(), label

    torch.manual_seed(0)
    loader = DataLoader(Blobs(), batch_size=16, shuffle=True, num_workers=2)
    for _ in range(2):
        for x, y in loader:
            time.sleep(0.002)


if __name__ == '__main__':
    {'make': make, 'run': run}[sys.argv[1]](sys.argv[2])
