"""A PyTorch IterableDataset over flat record shards: 6 files of 200 records of 8 KiB, no header;
each of 2 DataLoader workers takes every other shard (get_worker_info) and reads its records in
order with f.read(8192) until it returns nothing, batch 16, 2 epochs, a 2 ms step.

  torch_iterable_shards.py make DIR   writes DIR/shards/shard-<i>.bin
  torch_iterable_shards.py run DIR    trains over them
"""
import os
import sys
import time

RECORD, PER_SHARD, SHARDS = 8192, 200, 6


def path(data, s):
    return os.path.join(data, 'shards', 'shard-%05d.bin' % s)


def make(data):
    os.makedirs(os.path.join(data, 'shards'), exist_ok=True)
    for s in range(SHARDS):
        with open(path(data, s), 'wb') as f:
            f.write(os.urandom(RECORD * PER_SHARD))


def run(data):
    import torch
    from torch.utils.data import DataLoader, IterableDataset, get_worker_info

    class Shards(IterableDataset):
        def __iter__(self):
            w = get_worker_info()
            mine = range(w.id, SHARDS, w.num_workers) if w else range(SHARDS)
            for s in mine:
                with open(path(data, s), 'rb') as f:
                    while True:
                        record = f.read(RECORD)
                        if len(record) < RECORD:
                            break
                        yield torch.frombuffer(bytearray(record), dtype=torch.uint8)[:64].sum()

    loader = DataLoader(Shards(), batch_size=16, num_workers=2)
    for _ in range(2):
        for _ in loader:
            time.sleep(0.002)


if __name__ == '__main__':
    (make if sys.argv[1] == 'make' else run)(sys.argv[2])
