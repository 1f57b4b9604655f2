// The csv format's own options (dataset.csv_header; docs/formats.md, csv), declared as a config
// key by format/csv/csv_keys.cc and parsed straight into this type, which the config holds in
// DatasetConfig::formats and the format reads from FormatOptions::formats. A row's values come
// from the common FormatOptions::record_dims (DLIO's product of dataset.record_dims).
#pragma once

namespace dlio {

struct CsvOptions {
  bool header = false;  // the first line names the columns (dataset.csv_header)
};

}  // namespace dlio
