// reader.io_model: pyio over a file of equal records (raw with dataset.num_samples_per_file > 1):
// a map-style Dataset that keeps one `open(path, "rb")` per file and reads record i with
// `f.seek(i * size); f.read(size)` (or `f.readinto` of a buffer that size), as ports of
// TensorFlow's CIFAR-10 binary reader and fixed-record loaders do. The Python file is kept for the
// reader's life, so its buffer carries over from record to record as CPython's does: a seek into
// the bytes still buffered costs no request, and a record that begins there is partly served from
// them (Modules/_io/bufferedio.c of 3.11; measured in pyio_test).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "dlio/format.h"
#include "dlio/status.h"
#include "dlio/storage.h"

namespace dlio::io_models {

// Opens `path` as `open(path, "rb")` does (open, fstat, FileIO's lseek(0, SEEK_CUR)); its
// `samples` records split the file evenly (Corruption naming the file and the offset of the bytes
// left over otherwise). reader.pyio_call read or readinto gives the call; the other reader.pyio_*
// keys describe whole-file loads and are refused, each by name. Under reader.client_costs
// framework each read goes through a new bytes object, copied, as Python's read returns one.
// ReadSample is safe from many threads: they share the one file object, one call at a time, as
// a Python file object's lock makes them.
Result<std::unique_ptr<FormatReader>> OpenPyioRecordsReader(Storage* storage,
                                                            const std::string& path,
                                                            const FormatOptions& options,
                                                            const std::string& format_name,
                                                            uint64_t samples);

}  // namespace dlio::io_models
