// The npy and npz formats' own options (dataset.sample_layout), declared as a config key by
// format/npy_keys.cc and parsed straight into this type, which the config holds in
// DatasetConfig::formats and both formats (and the numpy model) read from FormatOptions::formats.
// What they share with other formats is common (FormatOptions): the samples a file should hold
// (samples_per_file: it only chooses the sample axis of an array whose labels do not, and never
// changes a file's count), DLIO's record shape (record_dims, record_element_type: the array
// writers produce; empty dims: a sample is a flat row of uint8 items; a record size that does not
// match is written as uint8 bytes) and reader.read_type (read_type memory keeps np.load's array
// while the file is open).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dlio/config_enums.h"
#include "dlio/option_sections.h"

namespace dlio {

struct NpyOptions {
  // The layout writers produce, and the reader's choice when a file does not tell
  // (docs/formats.md: npz labels' length, then samples_per_file, then this).
  SampleLayout sample_layout = SampleLayout::kFirstAxis;
  // npz: a deflated member of at most this many bytes is inflated once per open reader and kept
  // (later samples are a memcpy); larger ones are re-inflated from a forward-moving stream. No
  // key sets it (tests do).
  uint64_t inflate_cache_bytes = 256ull << 20;
  // npz under reader.io_model numpy (reader.npz_members): the members each np.load reads, in
  // order, comma-separated, as `z = np.load(path); x = z['x']; y = z['y']` does ("x,y"); the
  // sample's array is its member's (x.npy, else the first .npy member, else the first), which
  // must be named. Empty: the sample's member only, as the Python DLIO's np.load(path)['x'].
  std::string npz_members;
};

// The npy/npz section of `sections` (FormatOptions::formats, DatasetConfig::formats), or the
// defaults when it was never set; no copy.
inline const NpyOptions& NpyOf(const OptionSections& sections) {
  static const NpyOptions kDefaults;
  const NpyOptions* set = sections.Find<NpyOptions>();
  return set != nullptr ? *set : kDefaults;
}

// reader.npz_members as a list: the comma-separated names, blanks around each dropped (an empty
// setting: none; an empty name stays, for the key's check to refuse).
inline std::vector<std::string> NpzMemberNames(const NpyOptions& o) {
  std::vector<std::string> names;
  if (o.npz_members.find_first_not_of(" \t") == std::string::npos) return names;
  size_t start = 0;
  for (;;) {
    const size_t comma = o.npz_members.find(',', start);
    std::string name =
        o.npz_members.substr(start, comma == std::string::npos ? comma : comma - start);
    const size_t first = name.find_first_not_of(" \t");
    const size_t last = name.find_last_not_of(" \t");
    names.push_back(first == std::string::npos ? "" : name.substr(first, last - first + 1));
    if (comma == std::string::npos) return names;
    start = comma + 1;
  }
}

}  // namespace dlio
