// The npz and npy readers under reader.io_model numpy: every sample read is what the Python DLIO's
// NPZ/NPY readers do per sample on demand, np.load(path)[key] of the whole file (then indexing the
// array), with the requests numpy, zipfile and Python's buffered file issue (pyio/numpy_load.h).
// Opening a file is its first np.load: the sample count and layout come from the array it
// returns, and that array serves the reader's next sample, so a file opened and read once costs
// one np.load, as in Python (which has no separate open step).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "dlio/format.h"
#include "dlio/storage.h"
#include "format/npy_samples.h"
#include "io_models/pyio/numpy_load.h"

namespace dlio::format_internal {

// What a numpy-model reader loads.
struct NumpyModelSpec {
  Storage* storage = nullptr;  // must outlive the reader (it opens `path` for each load)
  std::string path;
  FileOptions file_options;
  bool keep = false;  // FormatOptions::read_type memory: the first load is kept
  // FormatOptions::framework_client_costs: each load into a fresh array, with np.load's copies
  // and zipfile's CRC-32, held until the caller drops it (SampleBuffer::Hold). false: the same
  // requests read into the caller's buffer and one this thread reuses (pyio::NumpyLoadInto),
  // nothing held.
  bool framework = false;
  // check_crc; the buffer sizes are set per open file (NumpyBuffersFor)
  pyio::NumpyBuffers buffers;
};

// Opens the file's native reader (for DescribeJson, which `dlio-run inspect` prints).
using NativeReaderOpener = std::function<Result<std::unique_ptr<FormatReader>>()>;

// Does the first np.load of spec.path (an npz's member chosen by pyio::PickSampleMember from the
// archive's directory) and returns the reader of its samples: the axis chosen by
// ResolveArraySamples without labels (np.load(path)['x'] does not read y), i.e. shape, then
// options.samples_per_file, then NpyOptions::sample_layout. ReadSample does a whole np.load
// per sample (a fresh open of the file, the load, a close), except that the next sample read
// after Open takes the array Open loaded (with keep, that array is the kept one). Without
// spec.framework a (contiguous) sample's bytes are read straight into the caller's buffer, the
// rest of the array into a buffer the reading thread reuses (the requests are the same, call for
// call), and options.first_read, when set, is served by Open's load (no array is left pending).
// Safe for concurrent use. `native` is called when the first load fails (its error, naming the
// offset, is returned when it fails too) and otherwise at most once, by the first DescribeJson.
Result<std::unique_ptr<FormatReader>> OpenNumpyModelReader(NumpyModelSpec spec,
                                                           const FormatOptions& options,
                                                           NativeReaderOpener native);

// The buffers Python and glibc would use for the open `file` of `storage` (its st_blksize), with
// `base`'s other settings.
pyio::NumpyBuffers NumpyBuffersFor(Storage* storage, const File& file, pyio::NumpyBuffers base);

// The spec of np.load(path) under `options` (direct I/O, read_type memory); the buffers' sizes
// are each open file's (NumpyBuffersFor).
NumpyModelSpec NumpyModelSpecFor(Storage* storage, const std::string& path,
                                 const FormatOptions& options);

}  // namespace dlio::format_internal
