"""A PyTorch DataLoader (2 fork workers) reading .npz files, for tests/preload.

  torch_dataloader.py make DIR   writes DIR/s<i>.npz and prints, as JSON, each file's member
                                 data spans [begin, end) from its zip layout
  torch_dataloader.py load DIR   iterates a DataLoader over them (workers end with os._exit)
"""
import json
import os
import struct
import sys
import zipfile

import numpy as np

FILES = 6


def make(data):
    layout = {}
    for i in range(FILES):
        path = os.path.join(data, 's%d.npz' % i)
        rng = np.random.default_rng(i)
        np.savez(path, x=rng.random((64, 32 + i)), y=np.arange(100 * (i + 1), dtype=np.int32))
        spans = []
        with open(path, 'rb') as f, zipfile.ZipFile(path) as z:
            for info in z.infolist():
                f.seek(info.header_offset)
                header = f.read(30)
                name_len, extra_len = struct.unpack('<HH', header[26:30])
                begin = info.header_offset + 30 + name_len + extra_len
                spans.append([begin, begin + info.compress_size])
        layout[path] = spans
    print(json.dumps(layout))


def load(data):
    import torch
    from torch.utils.data import DataLoader, Dataset

    class Npz(Dataset):
        def __init__(self):
            self.paths = [os.path.join(data, 's%d.npz' % i) for i in range(FILES)]

        def __len__(self):
            return len(self.paths)

        def __getitem__(self, i):
            with np.load(self.paths[i]) as z:
                return torch.tensor(float(z['x'].sum()) + float(z['y'].sum()))

    loader = DataLoader(Npz(), batch_size=2, num_workers=2,
                        multiprocessing_context='fork')
    total = sum(float(b.sum()) for b in loader)
    print('parent %d total %.3f' % (os.getpid(), total))


if __name__ == '__main__':
    {'make': make, 'load': load}[sys.argv[1]](sys.argv[2])
