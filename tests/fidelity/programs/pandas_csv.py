"""A CANDLE-style loader: each epoch pandas.read_csv loads every CSV file whole, then trains over
its rows in batches (batch 32 rows, 2 ms emulated step), 2 epochs.

  pandas_csv.py make DIR   writes DIR/train/img_<i>_of_4.csv (DataFrame.to_csv, ~1.5 MB each)
  pandas_csv.py run DIR    loads and trains
"""
import os
import sys
import time

import numpy as np
import pandas as pd

FILES = 4


def paths(data):
    return [os.path.join(data, 'train', 'img_%d_of_%d.csv' % (i, FILES)) for i in range(FILES)]


def make(data):
    os.makedirs(os.path.join(data, 'train'), exist_ok=True)
    rng = np.random.default_rng(6)
    for p in paths(data):
        pd.DataFrame(rng.random((800, 100))).to_csv(p, index=False)


def run(data):
    for _ in range(2):
        for p in paths(data):
            values = pd.read_csv(p).values
            for start in range(0, len(values), 32):
                values[start:start + 32].sum()
                time.sleep(0.002)


if __name__ == '__main__':
    {'make': make, 'run': run}[sys.argv[1]](sys.argv[2])
