// The npy reader under reader.io_model mmap: np.load(path, mmap_mode='r') once per open file, then
// each sample a copy of its row out of the mapping (np.array(arr[i])), so its pages fault in
// rather than being read (docs/io_models.md "mmap").
#pragma once

#include <memory>
#include <string>

#include "dlio/format.h"
#include "dlio/storage.h"

namespace dlio::io_models {

// Opens `path` as numpy 1.24's np.load(path, mmap_mode='r') does on Python 3.11 (numpy/lib/npyio.py
// load, numpy/lib/format.py open_memmap, numpy/core/memmap.py): open and read(6) of the magic
// through a buffered file (kept open until the load returns); open again, read the magic, header
// length and header (read_magic, _read_array_header), close; open a third time and map the whole
// file (mmap.mmap of offset 0: the data offset is below the allocation granularity), then close
// the first and the third (Python's mapping keeps a dup of the third's descriptor, closed with
// the mapping: one close more per file than here).
// Samples are rows along the first axis (options.samples_per_file chooses it as for the native
// reader); a layout of samples on the last axis is InvalidArgument naming the file, a header
// numpy refuses or data past the end Corruption naming the file and offset, a storage that maps
// no files Unimplemented.
Result<std::unique_ptr<FormatReader>> OpenNpyMmapReader(Storage* storage, const std::string& path,
                                                        const FormatOptions& options);

}  // namespace dlio::io_models
