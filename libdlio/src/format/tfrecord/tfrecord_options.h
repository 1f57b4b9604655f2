// The tfrecord format's own options (dataset.write_index, reader.use_index), declared as config
// keys by format/tfrecord/tfrecord_keys.cc and parsed straight into this type, which the config
// holds in DatasetConfig::formats and the format reads from FormatOptions::formats. The records a
// file holds are the common FormatOptions::samples_per_file, the codec dataset.compression.
#pragma once

#include "dlio/option_sections.h"

namespace dlio {

struct TfrecordOptions {
  bool write_index = true;  // write <file>.idx (record offsets) alongside (dataset.write_index)
  bool use_index = true;    // readers use <file>.idx when it exists (reader.use_index)
};

// The tfrecord section of `sections` (FormatOptions::formats, DatasetConfig::formats), or the
// defaults when it was never set; no copy.
inline const TfrecordOptions& TfrecordOf(const OptionSections& sections) {
  static const TfrecordOptions kDefaults;
  const TfrecordOptions* set = sections.Find<TfrecordOptions>();
  return set != nullptr ? *set : kDefaults;
}

}  // namespace dlio
