"""C4-style pretraining text: gzip-compressed JSON-lines shards streamed by an IterableDataset,
each DataLoader worker taking every num_workers-th shard (get_worker_info), reading it line by
line through gzip.open in text mode, tokenizing into fixed 256-token sequences; 8 shards of ~0.6 MB
compressed, 2 workers, batch 16 sequences, 2 epochs, a 3 ms step.

  gzip_jsonl_shards.py make DIR   writes DIR/c4/c4-train.<i>-of-00008.json.gz
  gzip_jsonl_shards.py run DIR    trains over them
"""
import gzip
import json
import os
import random
import sys
import time

SHARDS, DOCS, SEQ = 8, 400, 256


def path(data, s):
    return os.path.join(data, 'c4', 'c4-train.%05d-of-%05d.json.gz' % (s, SHARDS))


def make(data):
    os.makedirs(os.path.join(data, 'c4'), exist_ok=True)
    rnd = random.Random(9)
    words = ['tok%d' % i for i in range(20000)]
    for s in range(SHARDS):
        with gzip.open(path(data, s), 'wt') as f:
            for d in range(DOCS):
                text = ' '.join(rnd.choice(words) for _ in range(rnd.randint(100, 900)))
                f.write(json.dumps({'text': text, 'url': 'http://x/%d/%d' % (s, d)}) + '\n')


def run(data):
    import torch
    from torch.utils.data import DataLoader, IterableDataset, get_worker_info

    class Shards(IterableDataset):
        def __iter__(self):
            info = get_worker_info()
            mine = range(info.id, SHARDS, info.num_workers) if info else range(SHARDS)
            buf = []
            for s in mine:
                with gzip.open(path(data, s), 'rt') as f:
                    for line in f:
                        buf.extend(hash(w) % 32000 for w in json.loads(line)['text'].split())
                        while len(buf) >= SEQ:
                            yield torch.tensor(buf[:SEQ])
                            buf = buf[SEQ:]

    loader = DataLoader(Shards(), batch_size=16, num_workers=2)
    for _ in range(2):
        for x in loader:
            time.sleep(0.003)


if __name__ == '__main__':
    {'make': make, 'run': run}[sys.argv[1]](sys.argv[2])
