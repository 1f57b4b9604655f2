#!/usr/bin/python3
"""Seeds written by the tools dlio must interoperate with (numpy, pandas, PIL, h5py, tarfile), so the
fuzzers start from their layouts too: DLIO's own (samples on the last axis), pandas' default
header, RGB images. Run with Debian's python3 from the repository root:
    /usr/bin/python3 tests/fuzz/make_foreign_seeds.py tests/fuzz/corpus
Each file is the fuzz input: one options byte (0, or 1 = decode) and the file's bytes."""
import io
import os
import sys

import h5py
import numpy as np
import pandas as pd
from PIL import Image

OUT = sys.argv[1] if len(sys.argv) > 1 else "tests/fuzz/corpus"
rng = np.random.default_rng(7)


def put(target, name, data, options=0):
    path = os.path.join(OUT, target, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(bytes([options]) + data)
    print(f"{path} ({len(data) + 1} bytes)")


def npy_bytes(a):
    b = io.BytesIO()
    np.save(b, a)
    return b.getvalue()


# DLIO's layout: x of shape (dim, dim, num_samples), labels y of length num_samples.
x = rng.integers(0, 255, size=(4, 4, 3), dtype=np.uint8)
put("npy", "numpy_dlio_layout", npy_bytes(x))
put("npy", "numpy_float32_fortran", npy_bytes(np.asfortranarray(rng.random((3, 5), dtype=np.float32))))
b = io.BytesIO()
np.savez(b, x=x, y=np.zeros(3, dtype=np.uint8))
put("npz", "numpy_dlio_layout", b.getvalue())
b = io.BytesIO()
np.savez_compressed(b, x=rng.integers(0, 255, size=(3, 16), dtype=np.uint8), y=np.arange(3))
put("npz", "numpy_compressed_rows", b.getvalue())

# pandas' default: an index column and a header of column numbers.
put("csv", "pandas_default_header", pd.DataFrame(rng.random((3, 4))).to_csv().encode(), 1)

for fmt, target in (("JPEG", "jpeg"), ("PNG", "png")):
    b = io.BytesIO()
    Image.fromarray(rng.integers(0, 255, size=(6, 5, 3), dtype=np.uint8), "RGB").save(b, fmt)
    put(target, "pil_rgb", b.getvalue(), 1)

b = io.BytesIO()
with h5py.File(b, "w") as f:
    f.create_dataset("records", data=rng.integers(0, 255, size=(3, 16), dtype=np.uint8),
                     chunks=(1, 16), compression="gzip")
    f.create_dataset("labels", data=np.arange(3))
put("hdf5", "h5py_chunked_gzip", b.getvalue())

# tarfile's pax (long names) and gnu (././@LongLink) shards with a directory and a keyless member.
import tarfile  # noqa: E402

for fmt, name in ((tarfile.PAX_FORMAT, "tarfile_pax_long_names"),
                  (tarfile.GNU_FORMAT, "tarfile_gnu_long_names")):
    b = io.BytesIO()
    with tarfile.open(fileobj=b, mode="w", format=fmt) as t:
        d = tarfile.TarInfo("d" * 110)
        d.type = tarfile.DIRTYPE
        t.addfile(d)
        for i, data in enumerate((b"x" * 40, b"y" * 600)):
            for ext, payload in (("jpg", data), ("cls", b"%d" % i)):
                ti = tarfile.TarInfo("%s/k%d.%s" % (d.name, i, ext))
                ti.size = len(payload)
                t.addfile(ti, io.BytesIO(payload))
        ti = tarfile.TarInfo("README")
        ti.size = 2
        t.addfile(ti, io.BytesIO(b"hi"))
    data = b.getvalue().rstrip(b"\0")  # small seeds: the record padding cut, two zero blocks kept
    data += b"\0" * (-len(data) % 512 + 1024)
    put("webdataset", name, data)

# zipfile's archives: a directory, stored and deflated members, an archive comment (the end
# record search), once as the default reader (zipfile's requests) and once as native's.
import zipfile  # noqa: E402

b = io.BytesIO()
with zipfile.ZipFile(b, "w") as z:
    z.mkdir("imgs")
    z.writestr("imgs/000.jpg", b"j" * 300, zipfile.ZIP_DEFLATED)
    z.writestr("imgs/001.jpg", bytes(range(200)), zipfile.ZIP_STORED)
    z.comment = b"zipfile seed"
put("zip", "zipfile_mixed", b.getvalue())
put("zip", "zipfile_mixed_native", b.getvalue(), 1 << 7)
