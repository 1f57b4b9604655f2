"""A Keras-Sequence-style loop without worker processes: one process, a thread pool of 3
(`use_multiprocessing=False, workers=3`) loading each batch's 16 `.npy` images with np.load
ahead of the step, a shuffled order per epoch, a 5 ms step, and the weights saved at each epoch's
end with h5py in place, as `model.save_weights('weights.h5')` does (one dataset per layer);
256 images of 64x64x3 float32, 3 epochs.

  keras_threads_h5ckpt.py make DIR   writes DIR/images/img_<i>.npy
  keras_threads_h5ckpt.py run DIR    trains over them, saving DIR/ckpt/weights.h5
"""
import concurrent.futures
import os
import sys
import time

import numpy as np

N, BATCH, EPOCHS = 256, 16, 3
LAYERS = [(3, 3, 3, 32), (32,), (3, 3, 32, 64), (64,), (16384, 128), (128,), (128, 10), (10,)]


def path(data, i):
    return os.path.join(data, 'images', 'img_%04d.npy' % i)


def make(data):
    os.makedirs(os.path.join(data, 'images'), exist_ok=True)
    rng = np.random.default_rng(11)
    for i in range(N):
        np.save(path(data, i), rng.random((64, 64, 3), dtype=np.float32))


def load_batch(data, ids):
    return np.stack([np.load(path(data, i)) for i in ids]), np.array(ids) % 10


def save_weights(data, weights):
    import h5py
    os.makedirs(os.path.join(data, 'ckpt'), exist_ok=True)
    with h5py.File(os.path.join(data, 'ckpt', 'weights.h5'), 'w') as f:
        for k, w in enumerate(weights):
            f.create_dataset('layer_%d/kernel' % k, data=w)


def run(data):
    rng = np.random.default_rng(3)
    weights = [rng.random(s, dtype=np.float32) for s in LAYERS]
    with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
        for _ in range(EPOCHS):
            order = rng.permutation(N)
            batches = [order[b:b + BATCH] for b in range(0, N, BATCH)]
            pending = [pool.submit(load_batch, data, ids) for ids in batches[:3]]
            for b in range(len(batches)):
                x, y = pending.pop(0).result()
                if b + 3 < len(batches):
                    pending.append(pool.submit(load_batch, data, batches[b + 3]))
                time.sleep(0.005)
            save_weights(data, weights)


if __name__ == '__main__':
    {'make': make, 'run': run}[sys.argv[1]](sys.argv[2])
