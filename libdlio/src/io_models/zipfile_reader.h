// reader.io_model: zipfile. What CPython 3.11's zipfile sends to the file system for a map-style
// Dataset that opens an archive once per DataLoader worker and reads one member per sample
// (Lib/zipfile.py; docs/io_models.md, "zipfile"):
//
//   if self.zf is None:
//       self.zf = zipfile.ZipFile(path)   # open(path, "rb"), the end record, the central directory
//   return self.zf.read(name)             # ZipFile.open(name): the local header, name and extra
//                                         # through the shared file; ZipExtFile.read(): the data
//
// through one buffered file (a BufferedReader of st_blksize bytes), as pyio::ZipFile emulates it
// (io_models/pyio/zipfile.h). A sample is one member (directories aside), in central-directory
// order. Held request by request against CPython under the preload tracer (zipfile_test).
#pragma once

#include <memory>
#include <string>

#include "dlio/format.h"
#include "dlio/status.h"
#include "dlio/storage.h"

namespace dlio::io_models {

// Opens `path` as zipfile.ZipFile(path) does (the end record and central directory read).
// options.samples_per_file > 0 is the members the archive must hold at least (Corruption naming
// the file when it holds fewer); 0 takes them all. Under reader.client_costs framework each
// member's read returns a new bytes object (copied into the sample) and its CRC-32 is computed
// and checked, as zipfile does; else the member lands in the sample directly, with the same
// requests, and no CRC is computed.
Result<std::unique_ptr<FormatReader>> OpenZipfileReader(Storage* storage, const std::string& path,
                                                        const FormatOptions& options);

}  // namespace dlio::io_models
