"""Random access into an uncompressed tar of samples: each DataLoader worker opens the tar once
(tarfile.open, which reads every header to index the members), then per sample extractfile(name)
and read(); 300 members of 20 KiB, 2 workers, shuffle, batch 10, 2 epochs, a 2 ms step.

  tar_random_members.py make DIR   writes DIR/samples.tar
  tar_random_members.py run DIR    trains over it
"""
import io
import os
import sys
import tarfile
import time

N, SIZE = 300, 20 * 1024


def make(data):
    os.makedirs(data, exist_ok=True)
    with tarfile.open(os.path.join(data, 'samples.tar'), 'w') as tar:
        for i in range(N):
            info = tarfile.TarInfo('sample_%05d.bin' % i)
            info.size = SIZE
            tar.addfile(info, io.BytesIO(os.urandom(SIZE)))


def run(data):
    import torch
    from torch.utils.data import DataLoader, Dataset

    class Members(Dataset):
        def __init__(self):
            self.tar = None

        def __len__(self):
            return N

        def __getitem__(self, i):
            if self.tar is None:
                self.tar = tarfile.open(os.path.join(data, 'samples.tar'))
            blob = self.tar.extractfile('sample_%05d.bin' % i).read()
            return torch.frombuffer(bytearray(blob[:64]), dtype=torch.uint8).sum()

    torch.manual_seed(0)
    loader = DataLoader(Members(), batch_size=10, shuffle=True, num_workers=2)
    for _ in range(2):
        for x in loader:
            time.sleep(0.002)


if __name__ == '__main__':
    {'make': make, 'run': run}[sys.argv[1]](sys.argv[2])
