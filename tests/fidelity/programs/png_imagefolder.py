"""pil_imagefolder.py's torchvision-style ImageFolder loop over PNGs: 32 RGB 256x256 PNGs as Pillow
saves them (IDAT chunks of 64 KiB), opened with PIL and converted to RGB in 2 DataLoader workers.

  png_imagefolder.py make DIR   writes DIR/train/c<k>/img_<i>.png
  png_imagefolder.py run DIR    trains over them
"""
import os
import sys

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ beside the programs
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pil_imagefolder  # noqa: E402


def make(data):
    from PIL import Image

    rng = np.random.default_rng(2)
    for p in pil_imagefolder.paths(data, 'png'):
        os.makedirs(os.path.dirname(p), exist_ok=True)
        Image.fromarray(rng.integers(0, 255, (256, 256, 3), dtype=np.uint8)).save(p)


if __name__ == '__main__':
    {'make': make, 'run': lambda d: pil_imagefolder.run(d, 'png')}[sys.argv[1]](sys.argv[2])
