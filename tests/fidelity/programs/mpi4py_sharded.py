"""A data-parallel loader as HPC training codes write it with mpi4py (launched with
`mpirun -np N python3 mpi4py_sharded.py run DIR`): every rank globs the same sorted list of
96 sample files (one 4 x 64 x 64 float32 array each, 64 KiB + the .npy header), and per epoch
all ranks draw the same permutation from a generator seeded with the epoch (what PyTorch's
DistributedSampler does: shuffle globally, then rank r takes positions r, r + N, ...). Each
rank np.loads its shard in batches of 4, "trains" 10 ms per step and averages the loss over
the ranks with an allreduce (the gradient exchange's synchronisation); the last partial batch
is dropped; 2 epochs, a Barrier at the end of each.

  mpi4py_sharded.py make DIR   writes DIR/samples/sample_<i>.npy (untraced, no MPI)
  mpi4py_sharded.py run DIR    the traced loop, one process per rank
"""
import glob
import os
import sys
import time

import numpy as np

FILES, SHAPE, BATCH, EPOCHS, SEED = 96, (4, 64, 64), 4, 2, 1234
RANKS = 2  # the ranks tests/fidelity/closed_loop.sh runs it as (its RANKS default)


def make(data):
    os.makedirs(os.path.join(data, 'samples'), exist_ok=True)
    rng = np.random.default_rng(5)
    for i in range(FILES):
        np.save(os.path.join(data, 'samples', 'sample_%05d.npy' % i),
                rng.random(SHAPE, dtype=np.float32))


def run(data):
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    files = sorted(glob.glob(os.path.join(data, 'samples', '*.npy')))
    for epoch in range(EPOCHS):
        order = np.random.default_rng(SEED + epoch).permutation(len(files))
        mine = [files[i] for i in order[rank::size]]
        for step in range(len(mine) // BATCH):
            batch = np.stack([np.load(p) for p in mine[step * BATCH:(step + 1) * BATCH]])
            time.sleep(0.01)  # forward and backward
            loss = comm.allreduce(float(batch.mean()), op=MPI.SUM) / size
        comm.Barrier()
        if rank == 0:
            print('epoch %d: loss %.4f' % (epoch, loss))


if __name__ == '__main__':
    (make if sys.argv[1] == 'make' else run)(sys.argv[2])
