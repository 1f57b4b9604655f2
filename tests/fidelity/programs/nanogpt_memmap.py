"""nanoGPT's data loading (karpathy/nanoGPT train.py get_batch, widely copied): one flat file of
uint16 tokens; every batch re-creates np.memmap of it (nanoGPT does so to avoid a memory leak),
draws random windows of block_size + 1 tokens and stacks them; no DataLoader, one process;
8 MiB of tokens, block 256, batch 12, 60 iterations, a 3 ms step.

  nanogpt_memmap.py make DIR   writes DIR/train.bin
  nanogpt_memmap.py run DIR    trains over it
"""
import os
import sys
import time

import numpy as np

TOKENS, BLOCK, BATCH, ITERS = 4 * 1024 * 1024, 256, 12, 60


def make(data):
    os.makedirs(data, exist_ok=True)
    rng = np.random.default_rng(3)
    rng.integers(0, 50257, TOKENS, dtype=np.uint16).tofile(os.path.join(data, 'train.bin'))


def run(data):
    import torch
    torch.manual_seed(1337)
    for _ in range(ITERS):
        arr = np.memmap(os.path.join(data, 'train.bin'), dtype=np.uint16, mode='r')
        ix = torch.randint(len(arr) - BLOCK, (BATCH,))
        x = torch.stack([torch.from_numpy(arr[i:i + BLOCK].astype(np.int64)) for i in ix])
        y = torch.stack([torch.from_numpy(arr[i + 1:i + 1 + BLOCK].astype(np.int64)) for i in ix])
        del arr
        time.sleep(0.003)


if __name__ == '__main__':
    {'make': make, 'run': run}[sys.argv[1]](sys.argv[2])
