// The webdataset format's config keys (dataset.webdataset_members, docs/formats.md "webdataset";
// reader.tarfile_open, docs/io_models.md "tarfile"): declared here, beside the format, and parsed
// straight into its WebdatasetOptions in the config's DatasetConfig::formats. The config module
// compiles this file into its key table (config/sources.cmake), as it parses a config before any
// registry exists; the format's registry entry names the keys (format/register.cc) and checks
// the members' spelling (ValidateWebdatasetConfig, webdataset_format.cc).
#include "config/key_builders.h"
#include "format/webdataset/webdataset_options.h"

namespace dlio::config_internal {

void AddWebdatasetKeys(std::vector<KeySpec>* t) {
  t->push_back(String("dataset.webdataset_members",
                      DLIO_FORMAT_FIELD(WebdatasetOptions, std::string, members),
                      "webdataset: the extensions of each sample's members, comma-separated, in "
                      "archive order (<key>.<ext>): the first holds the sample's bytes, each "
                      "other its label in decimal; \"jpg,cls\" is WebDataset's image + class, "
                      "\"bin\" one member per sample"));
}

void AddWebdatasetReaderKeys(std::vector<KeySpec>* t) {
  t->push_back(Enum("reader.tarfile_open",
                    DLIO_FORMAT_ENUM_FIELD(WebdatasetOptions, TarfileOpen, tarfile_open),
                    "webdataset under io_model tarfile: how the shard reaches tarfile: "
                    "file_object = tarfile's stream mode over the file object open(path, 'rb') "
                    "gives, as WebDataset opens a shard (the 10240-byte records split by Python's "
                    "4 KiB buffer into read(2) calls of 4096 and 8192 bytes, after a 512-byte "
                    "first read); path = tarfile's stream mode opening the path itself, one "
                    "unbuffered read(2) per 10240-byte record"));
}

}  // namespace dlio::config_internal
