// reader.io_model: pyarrow. The requests MLPerf Storage's DLIO fork (mlcommons/DLIO_local_changes)
// sends through pyarrow.parquet when it reads a parquet file (docs/io_models.md, section pyarrow;
// Apache Arrow C++, which pyarrow wraps):
//
// - The footer (cpp/src/parquet/file_reader.cc, SerializedFile::ParseMetaData): one ReadAt of the
//   file's last min(size, footer_read_size) bytes (kDefaultFooterReadSize, 64 KiB: PARQUET-978),
//   then, only when the FileMetaData and its 8-byte tail do not fit in them, one ReadAt of the
//   metadata itself.
// - A column chunk spans [dictionary_page_offset or data_page_offset, + total_compressed_size)
//   (ComputeColumnChunkRange). Without pre_buffer each selected chunk of a row group is one ReadAt
//   (ReaderProperties::GetStream with buffered streams off, the default); with pre_buffer the row
//   group's selected chunks are coalesced first (cpp/src/arrow/io/interfaces.cc,
//   CoalesceReadRanges, with CacheOptions::Defaults() from cpp/src/arrow/io/caching.h: holes up to
//   8 KiB are read through, a merged range stops growing past 32 MiB).
// - The fork's local file system reader (parquet_reader_file_iterable.py) reads the footer through
//   pq.ParquetFile and a row group's data itself: `open(path, "rb")`, `seek(start)`,
//   `read(end - start)` over the span from the first to the last byte of the selected chunks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dlio/format.h"
#include "dlio/status.h"
#include "dlio/storage.h"

namespace dlio::io_models {

// ReaderProperties::footer_read_size's default (cpp/src/parquet/properties.h).
inline constexpr uint64_t kPyarrowFooterReadSize = 64 * 1024;
// ReadRangeCache::kDefaultHoleSizeLimit and kDefaultRangeSizeLimit (cpp/src/arrow/io/caching.h).
inline constexpr uint64_t kArrowHoleSizeLimit = 8192;
inline constexpr uint64_t kArrowRangeSizeLimit = 32 * 1024 * 1024;

// [offset, offset + length) of a file.
struct ByteRange {
  uint64_t offset = 0;
  uint64_t length = 0;
  bool operator==(const ByteRange& o) const { return offset == o.offset && length == o.length; }
};

// arrow::io::internal::CoalesceReadRanges: drops empty ranges and ranges inside the one before,
// sorts by offset, then merges neighbours while the hole between them is at most `hole_limit`
// and the merged range would stay within `range_limit` (a single larger range stays whole).
std::vector<ByteRange> CoalesceReadRanges(std::vector<ByteRange> ranges, uint64_t hole_limit,
                                          uint64_t range_limit);

// The requests of one row group's selected chunks, in the order issued, for `mode`: one per
// chunk (kColumns), coalesced (kPreBuffer), or the span from the first to the last byte (kFork;
// one range, which ReadForkSpan then reads through Python's buffered file).
std::vector<ByteRange> RowGroupRequests(const std::vector<ByteRange>& chunks, PyarrowRead mode);

// The fork's `with open(path, "rb") as fh: fh.seek(span.offset); fh.read(span.length)`: opens the
// file again, reads through io.BufferedReader's requests (pyio/buffered_reader.h) into `dst`,
// closes it. Errors: the storage's, naming the file; a short file is Corruption naming the offset.
Status ReadForkSpan(Storage* storage, const std::string& path, const ByteRange& span, bool direct,
                    uint8_t* dst);

}  // namespace dlio::io_models
