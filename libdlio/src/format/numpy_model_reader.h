// The npz and npy readers under reader.io_model numpy: every sample read is what the Python DLIO's
// NPZ/NPY readers do per sample on demand, np.load(path)[key] of the whole file (then indexing the
// array), with the requests numpy, zipfile and Python's buffered file issue (pyio/numpy_load.h).
#pragma once

#include <memory>
#include <string>

#include "dlio/format.h"
#include "dlio/storage.h"
#include "format/npy_samples.h"
#include "format/pyio/numpy_load.h"

namespace dlio::format_internal {

// What a numpy-model reader needs, taken from the native reader's Open.
struct NumpyModelSpec {
  Storage* storage = nullptr;  // must outlive the reader (it opens `path` for each load)
  std::string path;
  FileOptions file_options;
  std::string key;  // npz: the sample member's name ("x.npy"); npy: unused
  ArraySamples samples;
  uint64_t data_bytes = 0;  // of the array, as the native reader parsed it
  bool keep = false;        // NpyOptions::keep_arrays: the first load is kept (read_type memory)
  pyio::NumpyBuffers buffers;
};

// Wraps `native` (which answers num_samples, sample_size and DescribeJson) with ReadSample
// doing a whole np.load per sample: a fresh open of the file, the load, a close. Safe for
// concurrent use (each load has its own file; the kept array is guarded).
std::unique_ptr<FormatReader> NewNumpyModelReader(std::unique_ptr<FormatReader> native,
                                                  NumpyModelSpec spec);

// The buffers Python and glibc would use for files of `storage` at `path` (their st_blksize).
pyio::NumpyBuffers NumpyBuffersFor(Storage* storage, const std::string& path);

}  // namespace dlio::format_internal
