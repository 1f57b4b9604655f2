// Decoding one column chunk's pages (data pages v1 and v2, dictionary-encoded values or any value
// encoding of parquet_values.h, definition levels of OPTIONAL columns) into one value slot per row.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/unset_bytes.h"
#include "dlio/status.h"
#include "format/parquet/parquet_meta.h"
#include "format/parquet/parquet_schema.h"

namespace dlio::format_internal::parquet {

// A run of a fixed-width column's values, stored back to back in the chunk's own bytes from row
// `first_row` on (a PLAIN page stored uncompressed without nulls).
struct ValueSpan {
  uint64_t first_row = 0;
  const uint8_t* values = nullptr;
};

// A column chunk's values, one per row: fixed-width columns at row x width in `data` (a null is
// zeros; a BOOLEAN is one byte, 0 or 1), or in `spans` (below); byte_array values between
// offsets[row] and offsets[row + 1] (a null is empty).
struct DecodedColumn {
  UnsetBytes data;
  std::vector<uint64_t> offsets;  // byte_array only: rows + 1 entries
  // With ChunkInfo::in_place, a fixed-width chunk whose pages all qualify (see ValueSpan) is not
  // copied: its rows are in these spans, which point into the bytes given to DecodeChunk (the
  // caller keeps them), and `data` is empty. Each span runs to the next one's first row.
  std::vector<ValueSpan> spans;

  // Row `row`'s value of a fixed-width column of `width` bytes.
  const uint8_t* Fixed(uint64_t row, uint64_t width) const;
  // How many rows from `row` (of the chunk's `rows`) follow Fixed(row)'s value back to back: to
  // the end of its span, or of the chunk.
  uint64_t FixedRunFrom(uint64_t row, uint64_t rows) const;
};

// What decoding a chunk needs to know about it.
struct ChunkInfo {
  const ColumnLayout* column = nullptr;
  int32_t codec = kUncompressed;
  uint64_t rows = 0;                // the row group's
  uint64_t file_offset = 0;         // where `bytes` start in the file
  uint64_t chunk_uncompressed = 0;  // the chunk's total_uncompressed_size: no page exceeds it
  uint64_t max_decoded = 0;         // reader.max_decoded_bytes: the decoded column's limit
  bool in_place = false;            // values may stay in the chunk's bytes (DecodedColumn::spans)
  std::string path;
};

// Decodes the chunk's bytes [data, data + n). Corruption naming the file and the page's offset
// when a header, a size or a value does not fit; Unimplemented for encodings dlio does not read.
Result<DecodedColumn> DecodeChunk(const ChunkInfo& info, const uint8_t* data, size_t n);

// The RLE / bit-packed hybrid encoding (parquet-format Encodings.md): `count` values of
// `bit_width` bits from [p, end) into out. Corruption naming `path` and `offset` on a short or
// malformed run.
Status DecodeRleHybrid(const uint8_t* p, const uint8_t* end, int bit_width, uint64_t count,
                       std::vector<uint32_t>* out, const std::string& path, uint64_t offset);
// The same for bit widths up to 8 (levels, BOOLEAN values): a byte a value.
Status DecodeRleHybrid(const uint8_t* p, const uint8_t* end, int bit_width, uint64_t count,
                       std::vector<uint8_t>* out, const std::string& path, uint64_t offset);

}  // namespace dlio::format_internal::parquet
