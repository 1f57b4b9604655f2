"""fastMRI's SliceDataset way: one HDF5 file per volume (`kspace`, slices x 64 x 64 complex64,
plus a `reconstruction_esc` of slices x 32 x 32 float32 and attributes), the Dataset's __init__
opening every file once to count its slices (`hf['kspace'].shape[0]`) and read its attributes,
then __getitem__ opening the file of the slice with h5py.File and reading
`hf['kspace'][dataslice]`, `hf['reconstruction_esc'][dataslice]` and `dict(hf.attrs)`; a
DataLoader (2 workers, shuffle, batch 4), 2 epochs, a 3 ms step.

  fastmri_slices.py make DIR   writes DIR/singlecoil_train/file<k>.h5
  fastmri_slices.py run DIR    trains over them
"""
import os
import sys
import time

import numpy as np

VOLUMES = 12


def make(data):
    import h5py
    d = os.path.join(data, 'singlecoil_train')
    os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(21)
    for k in range(VOLUMES):
        slices = 10 + k % 5
        with h5py.File(os.path.join(d, 'file%d.h5' % (1000 + k)), 'w') as hf:
            kspace = (rng.standard_normal((slices, 64, 64)) +
                      1j * rng.standard_normal((slices, 64, 64))).astype(np.complex64)
            hf.create_dataset('kspace', data=kspace)
            hf.create_dataset('reconstruction_esc',
                              data=rng.random((slices, 32, 32)).astype(np.float32))
            hf.attrs['acquisition'] = 'CORPD_FBK'
            hf.attrs['max'] = 0.5
            hf.attrs['norm'] = 0.25
            hf.attrs['patient_id'] = 'p%d' % k


def run(data):
    import h5py
    import torch
    from torch.utils.data import DataLoader, Dataset

    class SliceDataset(Dataset):
        def __init__(self, root):
            self.examples = []
            for name in sorted(os.listdir(root)):
                path = os.path.join(root, name)
                with h5py.File(path, 'r') as hf:
                    num_slices = hf['kspace'].shape[0]
                    metadata = dict(hf.attrs)
                self.examples += [(path, s, metadata) for s in range(num_slices)]

        def __len__(self):
            return len(self.examples)

        def __getitem__(self, i):
            path, dataslice, metadata = self.examples[i]
            with h5py.File(path, 'r') as hf:
                kspace = hf['kspace'][dataslice]
                target = hf['reconstruction_esc'][dataslice]
                attrs = dict(hf.attrs)
            return torch.from_numpy(np.abs(kspace)), torch.from_numpy(target), attrs['max']

    torch.manual_seed(4)
    loader = DataLoader(SliceDataset(os.path.join(data, 'singlecoil_train')), batch_size=4,
                        shuffle=True, num_workers=2)
    for _ in range(2):
        for x, y, m in loader:
            time.sleep(0.003)


if __name__ == '__main__':
    {'make': make, 'run': run}[sys.argv[1]](sys.argv[2])
