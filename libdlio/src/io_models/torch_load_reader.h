// reader.io_model: torch_load. What `torch.load(path)` (PyTorch 1.13 on CPython 3.11) sends to the
// file system for a map-style Dataset that keeps one torch.save file per sample:
//
//   def __getitem__(self, i):
//       d = torch.load(self.paths[i])      # open(path, "rb"), _is_zipfile, the BufferAdapter,
//       return d['x'], d['label']          # the zip's directory, data.pkl, each storage
//
// through one buffered file (a BufferedReader of st_blksize bytes), as pyio::TorchLoadDirectory
// and TorchLoadRecords emulate it (io_models/pyio/torch_stream_reader.h), every offset learnt
// from the bytes read, so any torch.save file is read with torch.load's requests. A sample is the
// file's storages, in key order. Held request by request against torch.load under the preload
// tracer (pt_format_test; docs/io_models.md, "torch_load").
#pragma once

#include <memory>
#include <string>

#include "dlio/format.h"
#include "dlio/status.h"
#include "dlio/storage.h"

namespace dlio::io_models {

// Opening the reader is the file's first torch.load: open (and fstat), the calls of the load,
// close; its sample goes straight into options.first_read's buffer when the data source passes
// one (FirstRead::served), else it is held for the first ReadSample. Each later ReadSample is a
// torch.load of its own, open to close, as a program's next torch.load of the file is. Under
// reader.client_costs framework each storage is new memory (fresh pages from torch's mmap
// threshold up), copied into the sample; else the storages land in the sample directly, with the
// same requests. Corruption naming the file and the offset for a file torch.load would refuse.
Result<std::unique_ptr<FormatReader>> OpenTorchLoadReader(Storage* storage, const std::string& path,
                                                          const FormatOptions& options);

}  // namespace dlio::io_models
