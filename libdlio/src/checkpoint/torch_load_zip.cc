// ReadTorchSave: the zip records of a torch.save file (end of central directory, central
// directory, data.pkl's local header) around the pickle that torch_load.cc reads.
#include <string>

#include "checkpoint/torch_load.h"
#include "dlio/str_cat.h"
#include "format/torch/zip_records.h"

namespace dlio::checkpoint_internal {

using torch_save::kCentralHeader;
using torch_save::kEndRecord;
using torch_save::kLocalHeader;
Result<TorchSaveContents> ReadTorchSave(const std::string& what, uint64_t file_size,
                                        const TorchByteReader& read) {
  auto bad = [&what](uint64_t offset, const std::string& why) {
    return Status::Corruption(what, ": offset ", offset, ": ", why, " (not a torch.save zip)");
  };
  if (file_size < kEndRecord) return bad(0, StrCat("a file of ", file_size, " bytes"));
  const uint64_t end_at = file_size - kEndRecord;
  DLIO_ASSIGN_OR_RETURN(const std::string end, read(end_at, kEndRecord));
  if (end.size() != kEndRecord || end.compare(0, 4, "PK\x05\x06") != 0) {
    return bad(end_at, "no end of central directory record");
  }
  const uint64_t entries = Le(end, 10, 2), cd_size = Le(end, 12, 4), cd_at = Le(end, 16, 4);
  if (cd_at == 0xFFFFFFFF || entries == 0xFFFF) {
    return Status::Unimplemented(what, ": offset ", end_at,
                                 ": zip64 records (files of 4 GiB and more) are not read");
  }
  if (cd_size > kMaxTorchLoadBytes || cd_at > end_at || cd_size > end_at - cd_at) {
    return bad(end_at, "a central directory outside the file");
  }
  DLIO_ASSIGN_OR_RETURN(const std::string cd, read(cd_at, cd_size));
  if (cd.size() != cd_size) return bad(cd_at, "a short central directory");
  TorchSaveContents out;
  uint64_t pkl_at = 0, pkl_size = 0;
  bool found = false;
  for (size_t at = 0, k = 0; k < entries; ++k) {
    if (cd_size - at < kCentralHeader || cd.compare(at, 4, "PK\x01\x02") != 0) {
      return bad(cd_at + at, "no central directory header");
    }
    const uint64_t name_size = Le(cd, at + 28, 2);
    const uint64_t skip = name_size + Le(cd, at + 30, 2) + Le(cd, at + 32, 2);
    if (skip > cd_size - at - kCentralHeader) return bad(cd_at + at, "a header past its end");
    const std::string name = cd.substr(at + kCentralHeader, name_size);
    const size_t slash = name.find('/');
    if (slash == std::string::npos || (k > 0 && name.compare(0, slash, out.archive_name) != 0)) {
      return bad(cd_at + at, StrCat("record '", name, "' is not in the archive's folder"));
    }
    if (k == 0) out.archive_name = name.substr(0, slash);
    if (Le(cd, at + 10, 2) != 0) {
      return Status::Unimplemented(what, ": offset ", cd_at + at, ": record '", name,
                                   "' is compressed");
    }
    if (name.compare(slash, std::string::npos, "/data.pkl") == 0) {
      found = true;
      pkl_size = Le(cd, at + 24, 4);
      pkl_at = Le(cd, at + 42, 4);
    }
    at += kCentralHeader + skip;
  }
  if (!found) return bad(cd_at, "no data.pkl record");
  if (pkl_size > kMaxTorchLoadBytes || pkl_at > cd_at || kLocalHeader > cd_at - pkl_at) {
    return bad(pkl_at, "data.pkl outside the file");
  }
  DLIO_ASSIGN_OR_RETURN(const std::string local, read(pkl_at, kLocalHeader));
  if (local.size() != kLocalHeader || local.compare(0, 4, "PK\x03\x04") != 0) {
    return bad(pkl_at, "no local header of data.pkl");
  }
  const uint64_t data_at = pkl_at + kLocalHeader + Le(local, 26, 2) + Le(local, 28, 2);
  if (data_at > cd_at || pkl_size > cd_at - data_at) return bad(pkl_at, "data.pkl past its end");
  DLIO_ASSIGN_OR_RETURN(const std::string pickle, read(data_at, pkl_size));
  if (pickle.size() != pkl_size) return bad(data_at, "a short data.pkl");
  DLIO_ASSIGN_OR_RETURN(TorchSaveContents parsed, ParseTorchPickle(what, pickle));
  parsed.archive_name = out.archive_name;
  return parsed;
}

}  // namespace dlio::checkpoint_internal
