"""A WebDataset-style loop on Python's tarfile: 8 tar shards of 16 samples (a .jpg member of
~40 KB random bytes and a .cls label each), an IterableDataset whose DataLoader workers (2, fork)
each stream their own shards (split by worker, shard order shuffled per epoch) with
tarfile.open(fileobj=open(path, "rb"), mode="r|*") as WebDataset's tar_file_iterator does,
grouping members by key into samples; batch 4, 2 epochs, a 2 ms emulated step.

  wds_tarfile.py make DIR   writes DIR/train/shard_<i>_of_8.tar (Python's tarfile)
  wds_tarfile.py run DIR    trains over them
"""
import io
import os
import random
import sys
import tarfile
import time

SHARDS = 8
PER_SHARD = 16


def paths(data):
    return [os.path.join(data, 'train', 'shard_%d_of_%d.tar' % (i, SHARDS)) for i in range(SHARDS)]


def make(data):
    os.makedirs(os.path.join(data, 'train'), exist_ok=True)
    rng = random.Random(5)
    for s, p in enumerate(paths(data)):
        with tarfile.open(p, 'w', format=tarfile.PAX_FORMAT) as tar:
            for i in range(PER_SHARD):
                key = 'sample%06d' % (s * PER_SHARD + i)
                for ext, payload in (('jpg', rng.randbytes(rng.randint(30000, 50000))),
                                     ('cls', str(i % 10).encode())):
                    info = tarfile.TarInfo('%s.%s' % (key, ext))
                    info.size = len(payload)
                    tar.addfile(info, io.BytesIO(payload))


def samples(path):
    with open(path, 'rb') as f:
        stream = tarfile.open(fileobj=f, mode='r|*')
        current, sample = None, {}
        for member in stream:
            if not member.isreg():
                continue
            key, ext = member.name.split('.', 1)
            if key != current and sample:
                yield sample
                sample = {}
            current = key
            sample[ext] = stream.extractfile(member).read()
        if sample:
            yield sample


def run(data):
    import torch
    from torch.utils.data import DataLoader, IterableDataset, get_worker_info

    class Shards(IterableDataset):
        def __init__(self):
            self.epoch = 0

        def __iter__(self):
            order = paths(data)
            random.Random(self.epoch).shuffle(order)
            info = get_worker_info()
            mine = order[info.id::info.num_workers] if info else order
            for p in mine:
                for s in samples(p):
                    yield len(s['jpg']), int(s['cls'])

    torch.manual_seed(4)
    dataset = Shards()
    loader = DataLoader(dataset, batch_size=4, num_workers=2)
    for epoch in range(2):
        dataset.epoch = epoch
        for _ in loader:
            time.sleep(0.002)


if __name__ == '__main__':
    {'make': make, 'run': run}[sys.argv[1]](sys.argv[2])
