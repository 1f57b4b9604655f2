// The webdataset format's own options (dataset.webdataset_members, docs/formats.md "webdataset";
// reader.tarfile_open, docs/io_models.md "tarfile"), declared as config keys by
// format/webdataset/webdataset_keys.cc and parsed straight into this
// type, which the config holds in DatasetConfig::formats and the format reads from
// FormatOptions::formats. The samples a shard holds are the common FormatOptions::samples_per_file.
#pragma once

#include <string>

#include "dlio/config_enums.h"

namespace dlio {

struct WebdatasetOptions {
  // dataset.webdataset_members: the extensions of each sample's members, comma-separated, in
  // archive order: the first holds the sample's bytes, each other its label in decimal
  // (WebDataset's "<key>.jpg" + "<key>.cls" by default; "bin" alone: one member per sample).
  std::string members = "jpg,cls";
  // reader.tarfile_open file_object (the default): io_model tarfile reads a shard through
  // Python's buffered file, as WebDataset hands tarfile the file object open(path, "rb") gives;
  // path: tarfile.open(path, "r|") reads the file itself, unbuffered.
  TarfileOpen tarfile_open = TarfileOpen::kFileObject;
};

}  // namespace dlio
