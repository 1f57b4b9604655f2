// The parquet format's own options (dataset.parquet.*, reader.pyarrow_read; docs/formats.md),
// declared as config keys by format/parquet/parquet_keys.cc and parsed straight into this type,
// which the config holds in DatasetConfig::formats and the format reads from
// FormatOptions::formats. The codec is the common dataset.compression (FormatOptions).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dlio/config_enums.h"

namespace dlio {

// One parquet column (dataset.parquet.columns[i], the MLPerf v3.0 configs' spelling).
struct ParquetColumnOptions {
  std::string name;  // required, unique
  // uint8/16/32/64, int8/16/32/64, float16/32/64, binary, string (docs/formats.md, parquet).
  std::string dtype = "float32";
  uint64_t size = 1;  // values per row; > 1: a fixed-size list, stored as fixed_len_byte_array
  bool read = true;   // readers read this column's chunks (false: written, never read)
};

struct ParquetOptions {
  uint64_t row_group_size = 1024;  // rows per row group (dataset.parquet.row_group_size)
  // Writers: row groups also end every this many rows, as the MLPerf fork's write_table calls
  // (one a generation batch) start new ones (dataset.parquet.generation_batch_size; 0 =
  // row_group_size).
  uint64_t generation_batch_size = 0;
  PyarrowRead pyarrow_read = PyarrowRead::kFork;  // reader.pyarrow_read (io_model pyarrow only)
  // Writers: dictionary-encode scalar columns with PLAIN fallback, as pyarrow's use_dictionary
  // default does (dataset.parquet.use_dictionary); false: PLAIN pages only.
  bool use_dictionary = true;
  // The columns; empty: one fixed_len_byte_array column "data" of the sample's bytes.
  std::vector<ParquetColumnOptions> columns;
  // DLIO's keys read by no reader: dataset.parquet.read_mode (default, row_group: both read a
  // sample's whole row group) and dataset.parquet.partition_by (only "" is accepted).
  std::string read_mode = "default";
  std::string partition_by;
};

}  // namespace dlio
