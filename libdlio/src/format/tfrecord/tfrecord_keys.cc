// The tfrecord format's config keys (dataset.write_index, reader.use_index): declared here, beside
// the format, and parsed straight into its TfrecordOptions in the config's
// DatasetConfig::formats. The config module compiles this file into its key table
// (config/sources.cmake), as it parses a config before any registry exists; the format's
// registry entry names the keys (format/register.cc).
#include "config/key_builders.h"
#include "format/tfrecord/tfrecord_options.h"

namespace dlio::config_internal {

void AddTfrecordKeys(std::vector<KeySpec>* t) {
  t->push_back(Bool("dataset.write_index", DLIO_FORMAT_FIELD(TfrecordOptions, bool, write_index),
                    "tfrecord: write <file>.idx (DALI-style record offsets) beside each file"));
}

void AddTfrecordReaderKeys(std::vector<KeySpec>* t) {
  t->push_back(Bool("reader.use_index", DLIO_FORMAT_FIELD(TfrecordOptions, bool, use_index),
                    "tfrecord under io_model native: locate records through <file>.idx when it "
                    "exists (else scan the file); tf.data opens no index"));
}

}  // namespace dlio::config_internal
