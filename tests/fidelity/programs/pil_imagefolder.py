"""A torchvision-style ImageFolder loop: JPEGs in one folder per class, a Dataset that opens each
with PIL and decodes it (Image.open, convert("RGB"), as torchvision's default loader does), a
DataLoader with 2 fork workers, shuffle and batch 4, 2 epochs, a 2 ms emulated step.

  pil_imagefolder.py make DIR   writes DIR/train/c<k>/img_<i>.jpg (32 RGB 512x512 JPEGs, q 90)
  pil_imagefolder.py run DIR    trains over them
"""
import os
import sys
import time

import numpy as np

FILES = 32


def paths(data, ext='jpg'):
    return [os.path.join(data, 'train', 'c%d' % (i % 2), 'img_%d.%s' % (i, ext))
            for i in range(FILES)]


def make(data):
    from PIL import Image

    rng = np.random.default_rng(2)
    for p in paths(data):
        os.makedirs(os.path.dirname(p), exist_ok=True)
        Image.fromarray(rng.integers(0, 255, (512, 512, 3), dtype=np.uint8)).save(p, quality=90)


def run(data, ext='jpg'):
    import torch
    from PIL import Image
    from torch.utils.data import DataLoader, Dataset

    class Folder(Dataset):
        def __init__(self):
            self.paths = paths(data, ext)

        def __len__(self):
            return len(self.paths)

        def __getitem__(self, i):
            with open(self.paths[i], 'rb') as f:
                img = Image.open(f).convert('RGB')
            return torch.from_numpy(np.asarray(img)[:8, :8].copy()), i % 2

    torch.manual_seed(3)
    loader = DataLoader(Folder(), batch_size=4, shuffle=True, num_workers=2)
    for _ in range(2):
        for _ in loader:
            time.sleep(0.002)


if __name__ == '__main__':
    {'make': make, 'run': run}[sys.argv[1]](sys.argv[2])
