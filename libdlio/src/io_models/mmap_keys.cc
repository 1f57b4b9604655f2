// The mmap I/O model's config keys (reader.mmap_*; docs/io_models.md "mmap"): declared here and
// parsed straight into its MmapOptions in the config's DatasetConfig::formats. The config module
// compiles this file into its key table (config/sources.cmake); the model's entry in the I/O-model
// table names the keys' prefix (io_models/io_model_table.cc).
#include "config/key_builders.h"
#include "io_models/mmap_options.h"

namespace dlio::config_internal {

void AddMmapKeys(std::vector<KeySpec>* t) {
  t->push_back(Uint("reader.mmap_head_bytes", DLIO_FORMAT_FIELD(MmapOptions, uint64_t, head_bytes),
                    {0, uint64_t{1} << 20},
                    "io_model mmap (raw): before mapping a file, a first open reads this many "
                    "bytes of its start through Python's buffered file (a header parse, kept "
                    "open: PIL's Image.open; up to st_blksize costs one 4 KiB fill), then a "
                    "second open maps it (PIL's ImageFile.load of one raw strip); 0 = no head",
                    kSizeUnits));
}

}  // namespace dlio::config_internal
