// Writing one column chunk as pyarrow (Arrow's C++ parquet writer, default WriterProperties)
// writes it: values in write batches, a data page (v1) cut after a batch once its values reach
// the data page size or its rows the per-page row limit, dictionary encoding that falls back to
// PLAIN after the batch that takes the dictionary to its page size limit. A column the MLPerf
// fork writes as a list (ColumnLayout::list_values) is one fixed_len_byte_array a row here, so it
// gets the fork's page cuts (batches of 1,024 list values, ended on a row) but no dictionary: the
// fork's dictionary holds list elements, which a row-valued column cannot. docs/formats.md,
// "parquet", cites the Arrow sources.
#pragma once

#include <cstdint>
#include <string>

#include "dlio/storage.h"
#include "format/parquet/parquet_meta.h"
#include "format/parquet/parquet_schema.h"

namespace dlio::format_internal::parquet {

// Arrow's defaults (cpp/src/parquet/properties.h), which pyarrow's ParquetWriter keeps.
inline constexpr uint64_t kPageBytes = 1u << 20;            // kDefaultDataPageSize
inline constexpr uint64_t kDictionaryPageLimit = 1u << 20;  // DEFAULT_DICTIONARY_PAGE_SIZE_LIMIT
inline constexpr uint64_t kWriteBatchRows = 1024;           // DEFAULT_WRITE_BATCH_SIZE
inline constexpr uint64_t kMaxRowsPerPage = 20000;          // kDefaultMaxRowsPerPage
inline constexpr uint64_t kMaxRowGroupRows = 1u << 20;      // DEFAULT_MAX_ROW_GROUP_LENGTH

// Appends to a file in large pieces, tracking the offset. Requires external synchronization.
class Sink {
 public:
  explicit Sink(File* file) : file_(file) {}
  uint64_t offset() const { return written_ + buf_.size(); }
  Status Append(const std::string& s);
  Status Flush();

 private:
  File* file_;
  uint64_t written_ = 0;
  std::string buf_;
};

// What a chunk is written with.
struct ChunkOptions {
  Codec codec = kUncompressed;
  bool use_dictionary = true;  // dataset.parquet.use_dictionary
  uint64_t seed = 0;           // the file's: FillColumnValue's values
};

// Writes rows [first, last) of column `index` (layout `c`) at the sink's offset and fills the
// chunk's metadata. InvalidArgument naming the column when a page would pass 2 GiB.
Status WriteColumnChunk(Sink* sink, const ColumnLayout& c, uint64_t index, const ChunkOptions& o,
                        uint64_t first, uint64_t last, ColumnChunk* chunk);

}  // namespace dlio::format_internal::parquet
