#include "io_models/pyarrow_read.h"

#include <algorithm>

#include "io_models/pyio/buffered_reader.h"

namespace dlio::io_models {

std::vector<ByteRange> CoalesceReadRanges(std::vector<ByteRange> ranges, uint64_t hole_limit,
                                          uint64_t range_limit) {
  ranges.erase(std::remove_if(ranges.begin(), ranges.end(),
                              [](const ByteRange& r) { return r.length == 0; }),
               ranges.end());
  std::sort(ranges.begin(), ranges.end(),
            [](const ByteRange& a, const ByteRange& b) { return a.offset < b.offset; });
  ranges.erase(std::unique(ranges.begin(), ranges.end(),
                           [](const ByteRange& l, const ByteRange& r) {
                             return r.offset + r.length <= l.offset + l.length;
                           }),
               ranges.end());
  std::vector<ByteRange> out;
  if (ranges.empty()) return out;
  uint64_t start = ranges.front().offset, prev_end = start;
  for (const ByteRange& r : ranges) {
    const uint64_t end = r.offset + r.length;
    if (end - start > range_limit || r.offset > prev_end + hole_limit) {
      if (prev_end > start) out.push_back({start, prev_end - start});
      start = r.offset;
    }
    prev_end = end;
  }
  if (prev_end > start) out.push_back({start, prev_end - start});
  return out;
}

std::vector<ByteRange> RowGroupRequests(const std::vector<ByteRange>& chunks, PyarrowRead mode) {
  if (mode == PyarrowRead::kColumns || chunks.empty()) return chunks;
  if (mode == PyarrowRead::kPreBuffer) {
    return CoalesceReadRanges(chunks, kArrowHoleSizeLimit, kArrowRangeSizeLimit);
  }
  uint64_t begin = chunks.front().offset, end = 0;
  for (const ByteRange& c : chunks) {
    begin = std::min(begin, c.offset);
    end = std::max(end, c.offset + c.length);
  }
  return {{begin, end - begin}};
}

Status ReadForkSpan(Storage* storage, const std::string& path, const ByteRange& span, bool direct,
                    uint8_t* dst) {
  FileOptions fo;
  fo.direct = direct;
  DLIO_ASSIGN_OR_RETURN(auto file, storage->Open(path, OpenMode::kRead, fo));
  pyio::BufferedReader reader(file.get(), pyio::PythonBufferSize(storage, *file));
  DLIO_RETURN_NOT_OK(reader.Seek(static_cast<int64_t>(span.offset), 0).status());
  DLIO_ASSIGN_OR_RETURN(const size_t got, reader.ReadInto(static_cast<size_t>(span.length), dst));
  if (got != span.length) {
    return Status::Corruption(path, ": ", span.length, " bytes asked at offset ", span.offset,
                              ", the file ends after ", got);
  }
  return file->Close();
}

}  // namespace dlio::io_models
