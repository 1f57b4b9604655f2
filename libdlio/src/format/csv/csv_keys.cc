// The csv format's config key (dataset.csv_header; docs/formats.md, csv): declared here, beside
// the format, and parsed straight into its CsvOptions in the config's DatasetConfig::formats. The
// config module compiles this file into its key table (config/sources.cmake), as it parses a
// config before any registry exists; the format's registry entry names the key
// (format/register.cc).
#include "config/key_builders.h"
#include "format/csv/csv_options.h"

namespace dlio::config_internal {

void AddCsvKeys(std::vector<KeySpec>* t) {
  t->push_back(Bool("dataset.csv_header", DLIO_FORMAT_FIELD(CsvOptions, bool, header),
                    "csv: write a header line naming the columns"));
}

}  // namespace dlio::config_internal
