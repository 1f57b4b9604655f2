// reader.io_model: pyio. A file read as a Python program reads it through the binary file
// `open(path, "rb")` gives (io.BufferedReader over io.FileIO, CPython 3.11): open and fstat, an
// optional head `f.read(head_bytes)` (a header parse; any count up to the buffer size costs one
// fill of st_blksize bytes), then the body:
//   - read_size 0, call read:      f.read()                  (FileIO.readall: fstat, then
//                                                             read(2) of the rest + 1, and of 1)
//   - read_size 0, call readinto:  f.readinto(buf)           (buf holds the rest of the file: one
//                                                             read(2) of all that is not buffered)
//   - read_size n, call read:      while f.read(n): ...      (whole buffers straight, the rest
//                                                             through the buffer; to the end)
//   - read_size n, call readinto:  while f.readinto(buf): ... (buf of n bytes, kept; to the end)
//   - crop_bytes c:                f.seek(o); f.read(c) (or readinto): a random crop, o drawn
//                                  in [head, size - c]; the rest of the file is not read
// then close. The generic model of a file read front to back by Python code: raw bytes loaders
// (`np.frombuffer(f.read())`), zero-copy loaders that readinto a kept buffer after the header,
// pickle- and tarfile-style chunked readers. One sample per file: the file's bytes. Measured
// against CPython with strace and the preload tracer (pyio_test, docs/io_models.md "pyio").
#pragma once

#include <memory>
#include <string>

#include "dlio/format.h"
#include "dlio/status.h"
#include "dlio/storage.h"
#include "io_models/whole_file_reader.h"

namespace dlio::io_models {

// Opens `path` (open and fstat, as `open(path, "rb")` does); each ReadSample(0) reads the whole
// file with the requests above (the PyioOptions in options.formats, io_models/pyio_options.h)
// into the sample: under reader.client_costs none straight into it, under framework through a new
// bytes object per read call, copied, as Python's read returns one (readinto makes none under
// either). `check` then checks the bytes.
Result<std::unique_ptr<FormatReader>> OpenPyioReader(Storage* storage, const std::string& path,
                                                     const FormatOptions& options,
                                                     WholeFileCheck check);

}  // namespace dlio::io_models
