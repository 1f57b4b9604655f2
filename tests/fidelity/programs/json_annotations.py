"""A COCO-style detection loader: one JSON annotation file (image entries and boxes) loaded with
json.load at start, then per sample the image's .npy read with np.load in the DataLoader's
workers (persistent workers); 240 images of 64 x 64 x 3 uint8, 2 workers, shuffle, batch 8,
3 epochs, a 3 ms step.

  json_annotations.py make DIR   writes DIR/annotations.json and DIR/images/<id>.npy
  json_annotations.py run DIR    trains over them
"""
import json
import os
import sys
import time

import numpy as np

N = 240


def make(data):
    os.makedirs(os.path.join(data, 'images'), exist_ok=True)
    rng = np.random.default_rng(33)
    images, annotations = [], []
    for i in range(N):
        name = '%012d.npy' % i
        np.save(os.path.join(data, 'images', name),
                rng.integers(0, 256, (64, 64, 3), dtype=np.uint8))
        images.append({'id': i, 'file_name': name, 'width': 64, 'height': 64})
        for k in range(int(rng.integers(1, 6))):
            annotations.append({'id': len(annotations), 'image_id': i,
                                'bbox': [float(v) for v in rng.random(4) * 64],
                                'category_id': int(rng.integers(1, 80))})
    with open(os.path.join(data, 'annotations.json'), 'w') as f:
        json.dump({'images': images, 'annotations': annotations}, f)


def run(data):
    import torch
    from torch.utils.data import DataLoader, Dataset

    class Coco(Dataset):
        def __init__(self):
            with open(os.path.join(data, 'annotations.json')) as f:
                coco = json.load(f)
            self.images = coco['images']
            self.boxes = {}
            for a in coco['annotations']:
                self.boxes.setdefault(a['image_id'], []).append(a['bbox'])

        def __len__(self):
            return len(self.images)

        def __getitem__(self, i):
            info = self.images[i]
            img = np.load(os.path.join(data, 'images', info['file_name']))
            return torch.from_numpy(img).permute(2, 0, 1).float(), len(self.boxes.get(info['id'], []))

    torch.manual_seed(0)
    loader = DataLoader(Coco(), batch_size=8, shuffle=True, num_workers=2, persistent_workers=True)
    for _ in range(3):
        for x, n in loader:
            time.sleep(0.003)


if __name__ == '__main__':
    {'make': make, 'run': run}[sys.argv[1]](sys.argv[2])
