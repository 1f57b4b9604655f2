// The records of a torch.save zip, found by their names in its central directory: what
// PyTorchStreamReader looks up (caffe2/serialize/inline_container.cc) for torch.load, shared by
// format pt's native reader and the torch_load request model (io_models/pyio/torch_stream_reader).
#pragma once

#include <string>
#include <vector>

#include "dlio/status.h"
#include "format/zip.h"

namespace dlio::format_internal {

struct TorchRecords {
  const ZipMember* version = nullptr;  // "version" (or ".data/version"); null when absent
  const ZipMember* pickle = nullptr;   // "data.pkl"
  // "data/<key>" in key order (0, 1, 2, ...): the order torch.save's pickler numbers the
  // storages, which is the order its unpickler meets them.
  std::vector<const ZipMember*> storages;
};

// The records of `dir` (pointers into it) by their names after the archive's folder (the first
// path component). Corruption naming `path` and the offset when there is no data.pkl or a storage
// key appears twice; Unimplemented naming the record for a compressed one (torch.save stores every
// record). Other records (torch 2's byteorder) are left out.
Result<TorchRecords> FindTorchRecords(const std::string& path, const ZipDirectory& dir);

}  // namespace dlio::format_internal
