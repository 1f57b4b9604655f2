"""CIFAR-10-style batches: torchvision's CIFAR10 unpickles every `data_batch_<i>` file (a dict of
a uint8 array of rows and a list of labels, encoding='latin1') once, in the Dataset's __init__
in the main process, and serves samples from memory; DataLoader with 2 workers, shuffle, batch
64, 3 epochs, a 1 ms step.

  cifar_pickle_batches.py make DIR   writes DIR/cifar/data_batch_<1..5> (1,000 rows of 3,072 B)
  cifar_pickle_batches.py run DIR    trains over them
"""
import os
import pickle
import sys
import time

import numpy as np

FILES, ROWS = 5, 1000


def make(data):
    folder = os.path.join(data, 'cifar')
    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(7)
    for i in range(1, FILES + 1):
        batch = {'batch_label': 'training batch %d of %d' % (i, FILES),
                 'labels': [int(v) for v in rng.integers(0, 10, ROWS)],
                 'data': rng.integers(0, 256, (ROWS, 3072), dtype=np.uint8),
                 'filenames': ['img_%d_%d.png' % (i, j) for j in range(ROWS)]}
        with open(os.path.join(folder, 'data_batch_%d' % i), 'wb') as f:
            pickle.dump(batch, f, protocol=2)


def run(data):
    import torch
    from torch.utils.data import DataLoader, Dataset

    class Cifar(Dataset):
        def __init__(self):
            rows, labels = [], []
            for i in range(1, FILES + 1):
                with open(os.path.join(data, 'cifar', 'data_batch_%d' % i), 'rb') as f:
                    entry = pickle.load(f, encoding='latin1')
                rows.append(entry['data'])
                labels.extend(entry['labels'])
            self.data = np.vstack(rows).reshape(-1, 3, 32, 32).transpose((0, 2, 3, 1))
            self.labels = labels

        def __len__(self):
            return len(self.labels)

        def __getitem__(self, i):
            img = torch.from_numpy(np.ascontiguousarray(self.data[i])).permute(2, 0, 1)
            return img.float().div_(255), self.labels[i]

    torch.manual_seed(0)
    loader = DataLoader(Cifar(), batch_size=64, shuffle=True, num_workers=2)
    for _ in range(3):
        for x, y in loader:
            time.sleep(0.001)


if __name__ == '__main__':
    {'make': make, 'run': run}[sys.argv[1]](sys.argv[2])
