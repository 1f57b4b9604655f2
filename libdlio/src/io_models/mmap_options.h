// The mmap I/O model's own options (reader.mmap_*; docs/io_models.md "mmap"), declared as config
// keys by io_models/mmap_keys.cc and parsed straight into this type, which the config holds in
// DatasetConfig::formats and a format's mmap reader reads from FormatOptions::formats.
#pragma once

#include <cstdint>

#include "dlio/option_sections.h"

namespace dlio {

// How the program the mmap model emulates opens a file before mapping it.
struct MmapOptions {
  // reader.mmap_head_bytes: a first open reads this many bytes from the file's start through
  // Python's buffered file (a header parse: PIL's Image.open, one 4 KiB fill for a head up to
  // st_blksize), kept open until the file is unmapped; then a second open maps the file (PIL's
  // ImageFile.load of a single raw strip). 0: the file is mapped without a head read.
  uint64_t head_bytes = 0;
};

// The first reader.mmap_* key `formats` (DatasetConfig::formats) holds at other than its default
// ("mmap_head_bytes"), or nullptr: the keys are read by io_model mmap only, with a format whose
// mmap reader reads a head (FormatCapabilities::mmap_head; ValidateCapabilities refuses them
// otherwise).
inline const char* MmapKeySet(const OptionSections& formats) {
  const MmapOptions* set = formats.Find<MmapOptions>();
  if (set == nullptr) return nullptr;
  return set->head_bytes != MmapOptions{}.head_bytes ? "mmap_head_bytes" : nullptr;
}

}  // namespace dlio
