"""A Kaggle-style dataset: a CSV index (file name, label) read with pandas.read_csv once in the
Dataset's __init__, then one raw file per sample read whole with open(path, 'rb').read() in the
DataLoader's workers; 400 files of 12-20 KiB, 2 workers, shuffle, batch 16, 2 epochs, a 2 ms step.

  csv_index_files.py make DIR   writes DIR/train.csv and DIR/files/<id>.bin
  csv_index_files.py run DIR    trains over them
"""
import os
import sys
import time

import numpy as np

N = 400


def make(data):
    os.makedirs(os.path.join(data, 'files'), exist_ok=True)
    rng = np.random.default_rng(21)
    with open(os.path.join(data, 'train.csv'), 'w') as f:
        f.write('id,label\n')
        for i in range(N):
            name = 'f%05d' % i
            size = int(rng.integers(12 * 1024, 20 * 1024))
            with open(os.path.join(data, 'files', name + '.bin'), 'wb') as g:
                g.write(rng.integers(0, 256, size, dtype=np.uint8).tobytes())
            f.write('%s,%d\n' % (name, i % 7))


def run(data):
    import pandas as pd
    import torch
    from torch.utils.data import DataLoader, Dataset

    class Indexed(Dataset):
        def __init__(self):
            self.index = pd.read_csv(os.path.join(data, 'train.csv'))

        def __len__(self):
            return len(self.index)

        def __getitem__(self, i):
            row = self.index.iloc[i]
            with open(os.path.join(data, 'files', row['id'] + '.bin'), 'rb') as f:
                raw = np.frombuffer(f.read(), dtype=np.uint8)
            return torch.from_numpy(raw[:8192].astype(np.float32)), int(row['label'])

    torch.manual_seed(0)
    loader = DataLoader(Indexed(), batch_size=16, shuffle=True, num_workers=2)
    for _ in range(2):
        for x, y in loader:
            time.sleep(0.002)


if __name__ == '__main__':
    {'make': make, 'run': run}[sys.argv[1]](sys.argv[2])
