"""Images kept in one uncompressed zip archive (as CelebA-style datasets ship): each DataLoader
worker opens the archive lazily with zipfile.ZipFile and reads one member per sample with
ZipFile.read(name); 600 members of 20-28 KiB, 2 workers, shuffle, batch 16, 2 epochs, a 2 ms step.

  zip_members.py make DIR   writes DIR/images.zip
  zip_members.py run DIR    trains over it
"""
import os
import sys
import time
import zipfile

import numpy as np

N = 600


def name(i):
    return 'img_align/%06d.jpg' % i


def make(data):
    os.makedirs(data, exist_ok=True)
    rng = np.random.default_rng(11)
    with zipfile.ZipFile(os.path.join(data, 'images.zip'), 'w', zipfile.ZIP_STORED) as zf:
        for i in range(N):
            size = int(rng.integers(20 * 1024, 28 * 1024))
            zf.writestr(name(i), rng.integers(0, 256, size, dtype=np.uint8).tobytes())


def run(data):
    import torch
    from torch.utils.data import DataLoader, Dataset

    class Members(Dataset):
        def __init__(self):
            self.zf = None

        def __len__(self):
            return N

        def __getitem__(self, i):
            if self.zf is None:
                self.zf = zipfile.ZipFile(os.path.join(data, 'images.zip'))
            raw = np.frombuffer(self.zf.read(name(i)), dtype=np.uint8)
            return torch.from_numpy(raw[:4096].astype(np.float32)), i % 40

    torch.manual_seed(0)
    loader = DataLoader(Members(), batch_size=16, shuffle=True, num_workers=2)
    for _ in range(2):
        for x, y in loader:
            time.sleep(0.002)


if __name__ == '__main__':
    {'make': make, 'run': run}[sys.argv[1]](sys.argv[2])
