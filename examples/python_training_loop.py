#!/usr/bin/env python3
"""A Python training loop fed by dlio's data loader (the C API through ctypes): the Python twin of
custom_training_loop.cc.

    DLIO_C_LIBRARY=build/bindings/libdlio_c.so PYTHONPATH=bindings/python \\
        python3 examples/python_training_loop.py [DATA_DIR]

Writes a small npz dataset (16 files x 8 samples x 128 KiB), then trains two shuffled epochs with
two read threads, printing each epoch's load time, compute time and AU."""

import os
import shutil
import sys
import tempfile
import time

import dlio


def main(data_dir):
    cfg = dlio.Config()  # the built-in "default" workload, then overrides as with dlio-run --set
    cfg.set("dataset.data_folder", data_dir)
    cfg.set("dataset.num_files_train", 16)
    cfg.set("dataset.num_samples_per_file", 8)
    cfg.set("dataset.record_length_bytes", 128 * 1024)
    cfg.set("reader.batch_size", 8)
    cfg.set("reader.read_threads", 2)
    cfg.set("reader.file_shuffle", "seed")
    cfg.set("reader.sample_shuffle", "seed")
    cfg.set("train.computation_time", {"mean": 0.003, "stdev": 0.0005})
    dlio.generate(cfg)

    with dlio.Loader(cfg) as loader:
        for epoch in range(2):
            load = compute = 0.0
            steps = 0
            start = time.perf_counter()
            t0 = start
            for step, batch in enumerate(loader.epoch(epoch)):
                t1 = time.perf_counter()
                loader.compute(step)  # the model would consume batch.samples (uint8 arrays) here
                t2 = time.perf_counter()
                load += t1 - t0
                compute += t2 - t1
                steps += 1
                t0 = t2
            total = time.perf_counter() - start
            print("epoch %d: %d batches, load %.3f s, compute %.3f s, AU %.1f%%"
                  % (epoch + 1, steps, load, compute, 100.0 * compute / total))
        stats = loader.stats()
    print("read %d samples, %d bytes (%d storage reads)"
          % (stats["samples"], stats["bytes"], stats["read_ops"]))


if __name__ == "__main__":
    if len(sys.argv) > 1:
        main(sys.argv[1])
    else:
        tmp = tempfile.mkdtemp(prefix="dlio-python-example-")
        try:
            main(os.path.join(tmp, "data"))
        finally:
            shutil.rmtree(tmp)  # only the folder this run created
