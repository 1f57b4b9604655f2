// The footer's read and decode, the row counts' checks and the column selection of a parquet file
// being opened (parquet_footer.h).
#include "format/parquet/parquet_footer.h"

#include <algorithm>
#include <cstring>

#include "format/io_util.h"

namespace dlio::format_internal::parquet {

Result<FileMetaData> ReadFooter(File* file, uint64_t size, const std::string& path,
                                uint64_t tail_bytes, uint64_t* data_end) {
  if (size < kMagicBytes + kTailBytes) {
    return Status::Corruption(path, ": ", size, " bytes are too few for a parquet file (offset 0)");
  }
  std::vector<uint8_t> tail(std::min(size, std::max(tail_bytes, kTailBytes)));
  DLIO_RETURN_NOT_OK(ReadRange(file, size - tail.size(), tail.size(), 0, tail.data()));
  const uint8_t* end = tail.data() + tail.size() - kTailBytes;
  if (std::memcmp(end + 4, kMagic, kMagicBytes) != 0) {
    return Status::Corruption(path, ": no PAR1 magic at offset ", size - kMagicBytes,
                              " (not a parquet file, or an encrypted one)");
  }
  const uint64_t len = Le32(end);
  if (len == 0 || len > size - kTailBytes - kMagicBytes) {
    return Status::Corruption(path, ": footer length ", len, " at offset ", size - kTailBytes,
                              " does not fit the file's ", size, " bytes");
  }
  const uint64_t begin = size - kTailBytes - len;
  *data_end = begin;
  if (len + kTailBytes <= tail.size()) {
    return DecodeFileMetaData(end - len, len, path, begin);
  }
  std::vector<uint8_t> footer(len);
  DLIO_RETURN_NOT_OK(ReadRange(file, begin, len, 0, footer.data()));
  return DecodeFileMetaData(footer.data(), footer.size(), path, begin);
}

Status CheckRows(const FileMetaData& m, const std::string& path, uint64_t footer_offset) {
  if (m.num_rows < 0) {
    return Status::Corruption(path, ": num_rows ", m.num_rows, " (footer at offset ", footer_offset,
                              ")");
  }
  uint64_t total = 0;
  for (size_t g = 0; g < m.row_groups.size(); ++g) {
    const int64_t r = m.row_groups[g].num_rows;
    if (r < 0 || static_cast<uint64_t>(r) > static_cast<uint64_t>(m.num_rows) - total) {
      return Status::Corruption(path, ": row group ", g, " claims ", r, " rows; the file has ",
                                m.num_rows, " (footer at offset ", footer_offset, ")");
    }
    total += static_cast<uint64_t>(r);
  }
  if (total != static_cast<uint64_t>(m.num_rows)) {
    return Status::Corruption(path, ": row groups hold ", total, " rows, the footer says ",
                              m.num_rows, " (footer at offset ", footer_offset, ")");
  }
  return Status::OK();
}

Result<std::vector<size_t>> SelectColumns(const std::vector<ColumnLayout>& columns,
                                          const ParquetOptions& options, const std::string& path) {
  std::vector<size_t> selected;
  if (options.columns.empty()) {
    for (size_t c = 0; c < columns.size(); ++c) selected.push_back(c);
    return selected;
  }
  for (size_t c = 0; c < columns.size(); ++c) {
    for (const ParquetColumnOptions& o : options.columns) {
      if (o.name == columns[c].name && o.read) selected.push_back(c);
    }
  }
  for (const ParquetColumnOptions& o : options.columns) {
    const bool found = std::any_of(columns.begin(), columns.end(),
                                   [&](const ColumnLayout& l) { return l.name == o.name; });
    if (o.read && !found) {
      return Status::InvalidArgument(path, ": dataset.parquet.columns names '", o.name,
                                     "', which the file does not have");
    }
  }
  return selected;
}

}  // namespace dlio::format_internal::parquet
