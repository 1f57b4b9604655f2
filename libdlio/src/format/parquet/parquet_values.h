// The values of one data page, from each value encoding dlio reads (parquet-format Encodings.md):
// PLAIN (BOOLEAN bit-packed), RLE (BOOLEAN), DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY,
// DELTA_BYTE_ARRAY and BYTE_STREAM_SPLIT. Dictionary indices stay with the page decoder
// (parquet_pages.cc). Every decoder checks a count, length or bit width it reads against the bytes
// left (and the caller's byte budget) before it allocates anything from it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dlio/status.h"
#include "format/parquet/parquet_schema.h"

namespace dlio::format_internal::parquet {

// Where a page's values lie, for error messages: "<path>: column '<column>': page at offset
// <offset>: <what>".
struct ValueSite {
  const std::string& path;
  const std::string& column;
  uint64_t offset = 0;  // the page header's file offset
  Status Corrupt(const std::string& what) const;
};

// A page's non-null values, decoded. Fixed-width columns: value k is the `width` bytes at
// data + k x width. byte_array columns: value k is [data + offs[2k], data + offs[2k + 1]).
// A BOOLEAN value is one byte, 0 or 1.
struct PageValues {
  const uint8_t* data = nullptr;  // into the page, or into `owned`
  std::vector<uint64_t> offs;     // byte_array only
  std::vector<uint8_t> owned;     // values the encoding does not store as they are read
};

// Decodes `count` values of column `c` in `encoding` from [p, end). `max_bytes` bounds the bytes
// DELTA_BYTE_ARRAY may rebuild (its values can be longer than the page). Corruption naming the
// site when the bytes do not hold them or the encoding is not defined for the column's type;
// Unimplemented for encodings dlio does not read.
Status DecodeValues(int32_t encoding, const ColumnLayout& c, const uint8_t* p, const uint8_t* end,
                    uint64_t count, uint64_t max_bytes, PageValues* out, const ValueSite& site);

// DELTA_BINARY_PACKED: the header's `count` values of a `bits`-bit type (32 or 64), wrapped to
// that width, into out. Returns the bytes the encoding took (values may follow it).
Result<uint64_t> DecodeDeltaBinaryPacked(const uint8_t* p, const uint8_t* end, uint64_t count,
                                         int bits, std::vector<uint64_t>* out,
                                         const ValueSite& site);

// DELTA_LENGTH_BYTE_ARRAY: `count` values; offs gets their bounds relative to p. Returns the
// bytes taken (the lengths and the values).
Result<uint64_t> DecodeDeltaLengthByteArray(const uint8_t* p, const uint8_t* end, uint64_t count,
                                            std::vector<uint64_t>* offs, const ValueSite& site);

// DELTA_BYTE_ARRAY: `count` values rebuilt from their prefix lengths and suffixes into `bytes`
// (at most max_bytes), their bounds into offs. `fixed_width`: every value's length (0 for
// BYTE_ARRAY).
Status DecodeDeltaByteArray(const uint8_t* p, const uint8_t* end, uint64_t count,
                            uint64_t fixed_width, uint64_t max_bytes, std::vector<uint8_t>* bytes,
                            std::vector<uint64_t>* offs, const ValueSite& site);

// BYTE_STREAM_SPLIT: `count` values of `width` bytes gathered from their byte streams into out.
Status DecodeByteStreamSplit(const uint8_t* p, const uint8_t* end, uint64_t count, uint64_t width,
                             std::vector<uint8_t>* out, const ValueSite& site);

// BOOLEAN values, PLAIN (bit-packed, LSB first) or RLE (a 4-byte length, then the RLE /
// bit-packed hybrid of width 1): `count` bytes of 0 or 1 into out.
Status DecodeBooleans(const uint8_t* p, const uint8_t* end, uint64_t count, bool rle,
                      std::vector<uint8_t>* out, const ValueSite& site);

}  // namespace dlio::format_internal::parquet
