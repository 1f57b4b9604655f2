// The values of one data page, from each value encoding dlio reads (parquet-format Encodings.md):
// PLAIN (BOOLEAN bit-packed), RLE (BOOLEAN), DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY,
// DELTA_BYTE_ARRAY and BYTE_STREAM_SPLIT. Dictionary indices stay with the page decoder
// (parquet_pages.cc). Values are produced one at a time, so a page whose few bytes expand to many
// values (a miniblock of bit width 0 holds any number) costs no memory beyond the decoded column;
// every count, length or bit width read is checked against the bytes left before it is used.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dlio/status.h"
#include "format/parquet/parquet_schema.h"

namespace dlio::format_internal::parquet {

// Where a page's values lie, for error messages: "<path>: column '<column>': page at offset
// <offset>: <what>". The strings must outlive the site.
struct ValueSite {
  const std::string& path;
  const std::string& column;
  uint64_t offset = 0;  // the page header's file offset
  Status Corrupt(const std::string& what) const;
};

// DELTA_BINARY_PACKED values one at a time: the header's block size (a multiple of 128),
// miniblock count (values a miniblock a multiple of 32) and value count (the page's `count`) are
// checked by Open; a block's bit widths (at most `bits`, the type's 32 or 64) and a miniblock's
// bytes when Next first needs them. Values wrap to `bits` bits, as the encoding's arithmetic does.
// Errors name the site and the value byte (from p). Copyable; requires external synchronization.
class DeltaReader {
 public:
  Status Open(const uint8_t* p, const uint8_t* end, uint64_t count, int bits,
              const ValueSite* site);
  Status Next(uint64_t* value);
  // Where the encoding ends (what follows it starts there), walking the blocks a copy has left.
  Result<const uint8_t*> End() const;

 private:
  Status LoadMiniblock();
  Status Error(const std::string& what, const uint8_t* at) const;

  const ValueSite* site_ = nullptr;
  const uint8_t *begin_ = nullptr, *p_ = nullptr, *end_ = nullptr;
  uint64_t count_ = 0, produced_ = 0, mask_ = 0;
  uint64_t miniblocks_ = 0, per_miniblock_ = 0;
  uint64_t first_ = 0, last_ = 0, min_delta_ = 0;
  const uint8_t* widths_ = nullptr;  // the current block's bit widths
  uint64_t miniblock_ = 0;           // the next miniblock of the block
  const uint8_t* data_ = nullptr;    // the current miniblock's bits
  int bits_ = 64, width_ = 0;
  uint64_t left_ = 0, index_ = 0;  // values left in the current miniblock, and the next one
};

// One page's non-null values. A BOOLEAN value is one byte, 0 or 1.
class ValueReader {
 public:
  virtual ~ValueReader() = default;
  // The next value's bytes (`*size` of them), valid until the next call. Corruption naming the
  // site when the page's bytes do not hold it.
  virtual Status Next(const uint8_t** value, uint64_t* size) = 0;
};

// A reader of `count` values of column `c` in `encoding` from [p, end). `max_bytes` bounds the
// bytes DELTA_BYTE_ARRAY rebuilds (its values can be longer than the page). Corruption naming the
// site when the encoding is not defined for the column's type or its header does not fit;
// Unimplemented for encodings dlio does not read.
Result<std::unique_ptr<ValueReader>> OpenValues(int32_t encoding, const ColumnLayout& c,
                                                const uint8_t* p, const uint8_t* end,
                                                uint64_t count, uint64_t max_bytes,
                                                const ValueSite& site);

// Readers of the byte-array encodings (parquet_delta.cc), for OpenValues.
Result<std::unique_ptr<ValueReader>> OpenDeltaLengths(const uint8_t* p, const uint8_t* end,
                                                      uint64_t count, const ValueSite& site);
Result<std::unique_ptr<ValueReader>> OpenDeltaStrings(const uint8_t* p, const uint8_t* end,
                                                      uint64_t count, uint64_t fixed_width,
                                                      uint64_t max_bytes, const ValueSite& site);

}  // namespace dlio::format_internal::parquet
