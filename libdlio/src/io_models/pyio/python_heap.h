// Where glibc's dynamic mmap and trim thresholds stand in a Python process once it has imported a
// framework, and how to put an emulation's process there.
//
// glibc serves a malloc at or above its mmap threshold (128 KiB at start) with a mapping of its
// own; freeing such a mapped block raises the threshold to the block's size and the trim
// threshold to twice that. Imports do it: in Python 3.11 on Debian 12, `import numpy` (numpy
// 1.24.2; also h5py 3.7.0's import) leaves the threshold at 315,392 bytes, `import torch` (1.13)
// at 425,984 and `import pandas` (1.5.3) at 454,656 (measured by asking, in forked children,
// which malloc sizes get mappings: benchmarks/python_malloc_thresholds.py, docs/io_models.md).
// Those thresholds decide whether a loader's 256 KiB reads land in fresh pages or warm ones, most
// of what such a read costs, so an emulation of that loader starts from the same ones.
#pragma once

#include <cstddef>

#include "dlio/config_enums.h"

namespace dlio::pyio {

// The mmap threshold, in bytes, that importing `model`'s Python stack leaves (numpy: numpy's;
// h5py and mmap: numpy's, which they import; pytorch: torch's; pandas: pandas'); 0 for models
// whose reads do not land in Python's heap (native, tf.data, auto). The I/O-model table's heap
// setting (io_models/io_model_table.h).
size_t PythonImportThreshold(IoModel model);

// Raises this process's thresholds to `threshold` (and the trim threshold to twice it) as the
// import did: one block of that size, mapped, then freed. Never lowers them: when they are
// already higher (or were fixed with mallopt / MALLOC_MMAP_THRESHOLD_), nothing changes. 0 does
// nothing.
void MatchPythonImports(size_t threshold);

}  // namespace dlio::pyio
