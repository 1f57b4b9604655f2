// The webdataset format's own options (reader.tarfile_open; docs/io_models.md "tarfile"),
// declared as a config key by format/webdataset/webdataset_keys.cc and parsed straight into this
// type, which the config holds in DatasetConfig::formats and the format reads from
// FormatOptions::formats. The samples a shard holds are the common FormatOptions::samples_per_file.
#pragma once

#include "dlio/config_enums.h"

namespace dlio {

struct WebdatasetOptions {
  // reader.tarfile_open file_object (the default): io_model tarfile reads a shard through
  // Python's buffered file, as WebDataset hands tarfile the file object open(path, "rb") gives;
  // path: tarfile.open(path, "r|") reads the file itself, unbuffered.
  TarfileOpen tarfile_open = TarfileOpen::kFileObject;
};

}  // namespace dlio
