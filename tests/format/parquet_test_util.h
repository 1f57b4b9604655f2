// Helpers of the parquet tests: the options of a typed multi-column file and the row bytes our
// reader returns for it.
#pragma once

#include <string>
#include <vector>

#include "dlio/format.h"
#include "format/parquet/parquet_schema.h"

namespace dlio::testing {

// Columns of every dtype kind: scalars of each width, a float16 list, byte arrays.
inline std::vector<ParquetColumnOptions> AllKindsColumns() {
  return {{"i8", "int8", 1, true},      {"u16", "uint16", 1, true},  {"i32", "int32", 1, false},
          {"i64", "int64", 1, true},    {"f16", "float16", 1, true}, {"f32", "float32", 1, true},
          {"f64", "float64", 1, false}, {"vec", "float16", 8, true}, {"blob", "binary", 5, true},
          {"txt", "string", 3, true}};
}

// Options of a file of AllKindsColumns() compressed with `codec`.
inline FormatOptions AllKindsOptions(const char* codec, uint64_t row_group_size) {
  FormatOptions o;
  o.compression = codec;
  o.parquet.row_group_size = row_group_size;
  o.parquet.columns = AllKindsColumns();
  return o;
}

// The bytes ReadSample returns for `row`: the read columns' stored values, in column order.
inline std::string ExpectedRow(const ParquetOptions& options, uint64_t seed, uint64_t row,
                               uint64_t sample_size = 0) {
  auto layout = format_internal::parquet::WriterLayout(options, sample_size);
  std::string out;
  for (size_t c = 0; c < layout->size(); ++c) {
    const auto& col = (*layout)[c];
    if (!col.read) continue;
    std::string v(col.width != 0 ? col.width : col.value_size, '\0');
    format_internal::parquet::FillColumnValue(col, c, seed, row,
                                              reinterpret_cast<uint8_t*>(v.data()));
    out += v;
  }
  return out;
}

}  // namespace dlio::testing
