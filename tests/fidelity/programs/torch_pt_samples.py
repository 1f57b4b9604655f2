"""Preprocessed samples saved one per file with torch.save (a dict of a float tensor and a
label), loaded per sample with torch.load in a map-style Dataset; DataLoader with 2 workers,
shuffle, batch 8, 2 epochs, a 3 ms step.

  torch_pt_samples.py make DIR   writes DIR/pt/<i>.pt (160 files of ~48 KiB)
  torch_pt_samples.py run DIR    trains over them
"""
import os
import sys
import time

N = 160


def path(data, i):
    return os.path.join(data, 'pt', 'sample_%05d.pt' % i)


def make(data):
    import torch
    os.makedirs(os.path.join(data, 'pt'), exist_ok=True)
    g = torch.Generator().manual_seed(5)
    for i in range(N):
        torch.save({'features': torch.rand(3, 64, 64, generator=g), 'label': i % 10}, path(data, i))


def run(data):
    import torch
    from torch.utils.data import DataLoader, Dataset

    class PtFiles(Dataset):
        def __len__(self):
            return N

        def __getitem__(self, i):
            d = torch.load(path(data, i))
            return d['features'], d['label']

    torch.manual_seed(0)
    loader = DataLoader(PtFiles(), batch_size=8, shuffle=True, num_workers=2)
    for _ in range(2):
        for x, y in loader:
            time.sleep(0.003)


if __name__ == '__main__':
    {'make': make, 'run': run}[sys.argv[1]](sys.argv[2])
