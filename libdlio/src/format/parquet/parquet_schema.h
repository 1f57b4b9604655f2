// How dlio's parquet columns map onto Parquet's physical types (writers), how a file's flat schema
// maps back onto columns (readers), and the values our writer stores.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dlio/format.h"
#include "dlio/status.h"
#include "format/parquet/parquet_meta.h"
#include "format/parquet/parquet_options.h"

namespace dlio::format_internal::parquet {

// How our writer shapes a value's random bytes (decided once per column by WriterLayout).
enum class ValueKind : uint8_t {
  kRaw,       // as generated: lists, binary, the legacy data column
  kLetters,   // string: a-z
  kHalf,      // float16: finite, in [0, 1)
  kFloat,     // float32 in [0, 1)
  kDouble,    // float64 in [0, 1)
  kSmallInt,  // int8/16 (uint8/16): sign- or zero-extended to the INT32 width
};

// One leaf column as dlio writes or reads it.
struct ColumnLayout {
  std::string name;
  std::string dtype;        // the config's dtype ("" for columns of files dlio did not write)
  SchemaElement element;    // its schema element (type, length, repetition, logical type)
  uint64_t width = 0;       // stored bytes of one value (BOOLEAN: 1); 0 for byte_array
  uint64_t value_size = 0;  // byte_array values our writer stores: bytes each
  bool read = true;
  ValueKind kind = ValueKind::kRaw;  // writers: how values are shaped
  int small_int_bytes = 0;           // kSmallInt: the dtype's width (1 or 2)
  // Writers: values in a row of a column the MLPerf fork writes as a list (size > 1, and the
  // legacy data column: one uint8 a byte); 0 for scalars.
  uint64_t list_values = 0;
};

// The columns a writer stores for `options` (sample_size: the legacy "data" column's width).
// InvalidArgument naming dataset.parquet.columns[i] for an unknown dtype, a zero size, a
// duplicate or empty name.
Result<std::vector<ColumnLayout>> WriterLayout(const ParquetOptions& options, uint64_t sample_size);

// The leaf columns of a file's schema (flat schemas only: a root whose children are primitive
// REQUIRED or OPTIONAL columns). Unimplemented naming the file and column otherwise.
Result<std::vector<ColumnLayout>> FileLayout(const FileMetaData& m, const std::string& path);

// Stored bytes of the value of column `column` (index in the layout) in row `row` of a file
// written with `seed`: `c.width` bytes, or `c.value_size` for byte_array columns. Floats are
// finite values in [0, 1); integers are sign- or zero-extended from their dtype's width.
void FillColumnValue(const ColumnLayout& c, uint64_t column, uint64_t seed, uint64_t row,
                     uint8_t* dst);

// The physical type's name ("INT32", "FIXED_LEN_BYTE_ARRAY").
const char* PhysicalTypeName(int32_t type);

}  // namespace dlio::format_internal::parquet
