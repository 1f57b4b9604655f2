#include "format/parquet/parquet_writer.h"

#include <algorithm>

#include "format/io_util.h"
#include "format/parquet/parquet_codec.h"
#include "format/parquet/parquet_meta.h"
#include "format/parquet/parquet_schema.h"

namespace dlio::format_internal::parquet {
namespace {

// Appends to a file in kWriteChunk pieces, tracking the offset.
class Sink {
 public:
  explicit Sink(File* file) : file_(file) {}
  uint64_t offset() const { return written_ + buf_.size(); }
  Status Append(const std::string& s) {
    buf_.append(s);
    return buf_.size() >= kWriteChunk ? Flush() : Status::OK();
  }
  Status Flush() {
    if (buf_.empty()) return Status::OK();
    DLIO_RETURN_NOT_OK(file_->WriteAt(written_, buf_.data(), buf_.size()));
    written_ += buf_.size();
    buf_.clear();
    return Status::OK();
  }

 private:
  File* file_;
  uint64_t written_ = 0;
  std::string buf_;
};

// The PLAIN values of rows [first, last) of column `index`.
std::string PlainValues(const ColumnLayout& c, uint64_t index, uint64_t seed, uint64_t first,
                        uint64_t last) {
  std::string out;
  const uint64_t n = c.width != 0 ? c.width : c.value_size;
  std::string value(n, '\0');
  for (uint64_t row = first; row < last; ++row) {
    FillColumnValue(c, index, seed, row, reinterpret_cast<uint8_t*>(value.data()));
    if (c.width == 0) PutLe32(&out, static_cast<uint32_t>(n));
    out.append(value);
  }
  return out;
}

// Writes rows [first, last) of column `index` as data pages; fills the chunk's metadata.
Status WriteChunk(Sink* sink, const ColumnLayout& c, uint64_t index, const FileSpec& spec,
                  Codec codec, uint64_t first, uint64_t last, ColumnChunk* chunk) {
  const uint64_t row_bytes = (c.width != 0 ? c.width : c.value_size + 4);
  const uint64_t rows_per_page =
      std::max<uint64_t>(1, kPageBytes / std::max<uint64_t>(1, row_bytes));
  ColumnMetaData& m = chunk->meta;
  chunk->has_meta = true;
  m.type = c.element.type;
  m.encodings = {kPlain};
  m.path = {c.name};
  m.codec = codec;
  m.num_values = static_cast<int64_t>(last - first);
  m.data_page_offset = static_cast<int64_t>(sink->offset());
  chunk->file_offset = m.data_page_offset;
  for (uint64_t r = first; r < last; r += rows_per_page) {
    const uint64_t end = std::min(last, r + rows_per_page);
    const std::string values = PlainValues(c, index, spec.seed, r, end);
    std::string page;
    DLIO_RETURN_NOT_OK(
        CompressPage(codec, reinterpret_cast<const uint8_t*>(values.data()), values.size(), &page));
    if (values.size() > INT32_MAX || page.size() > INT32_MAX) {
      return Status::InvalidArgument("parquet page of ", values.size(),
                                     " bytes exceeds 2 GiB (a row of column '", c.name,
                                     "' is too large)");
    }
    PageHeader h;
    h.uncompressed_size = static_cast<int32_t>(values.size());
    h.compressed_size = static_cast<int32_t>(page.size());
    h.num_values = static_cast<int32_t>(end - r);
    const std::string header = EncodePageHeader(h);
    m.total_uncompressed_size += static_cast<int64_t>(header.size() + values.size());
    m.total_compressed_size += static_cast<int64_t>(header.size() + page.size());
    DLIO_RETURN_NOT_OK(sink->Append(header));
    DLIO_RETURN_NOT_OK(sink->Append(page));
  }
  return Status::OK();
}

FileMetaData Skeleton(const std::vector<ColumnLayout>& columns, uint64_t rows) {
  FileMetaData m;
  m.num_rows = static_cast<int64_t>(rows);
  m.created_by = "dlio";
  SchemaElement root;
  root.name = "schema";
  root.num_children = static_cast<int32_t>(columns.size());
  m.schema.push_back(root);
  for (const ColumnLayout& c : columns) m.schema.push_back(c.element);
  return m;
}

}  // namespace

Status WriteParquet(File* file, const FileSpec& spec, const FormatOptions& options) {
  DLIO_ASSIGN_OR_RETURN(Codec codec, ParseParquetCompression(options.compression));
  const uint64_t rows = spec.sample_sizes.size();
  DLIO_ASSIGN_OR_RETURN(std::vector<ColumnLayout> columns,
                        WriterLayout(options.parquet, rows == 0 ? 0 : spec.sample_sizes[0]));
  const uint64_t group_rows = std::max<uint64_t>(1, options.parquet.row_group_size);
  FileMetaData meta = Skeleton(columns, rows);
  Sink sink(file);
  DLIO_RETURN_NOT_OK(sink.Append(std::string(kMagic, kMagicBytes)));
  for (uint64_t first = 0; first < rows; first += group_rows) {
    const uint64_t last = std::min(rows, first + group_rows);
    RowGroup g;
    g.num_rows = static_cast<int64_t>(last - first);
    g.columns.resize(columns.size());
    for (size_t c = 0; c < columns.size(); ++c) {
      DLIO_RETURN_NOT_OK(WriteChunk(&sink, columns[c], c, spec, codec, first, last, &g.columns[c]));
      g.total_byte_size += g.columns[c].meta.total_uncompressed_size;
    }
    meta.row_groups.push_back(std::move(g));
  }
  std::string footer = EncodeFileMetaData(meta);
  PutLe32(&footer, static_cast<uint32_t>(footer.size()));
  footer.append(kMagic, kMagicBytes);
  DLIO_RETURN_NOT_OK(sink.Append(footer));
  return sink.Flush();
}

}  // namespace dlio::format_internal::parquet
