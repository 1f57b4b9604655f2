#include "format/parquet/parquet_writer.h"

#include <algorithm>

#include "format/io_util.h"
#include "format/parquet/parquet_chunk.h"
#include "format/parquet/parquet_codec.h"
#include "format/parquet/parquet_meta.h"
#include "format/parquet/parquet_options.h"
#include "format/parquet/parquet_schema.h"

namespace dlio::format_internal::parquet {
namespace {

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

// Rows [first, last) as one row group.
Status WriteRowGroup(Sink* sink, const std::vector<ColumnLayout>& columns, const ChunkOptions& o,
                     uint64_t first, uint64_t last, FileMetaData* meta) {
  RowGroup g;
  g.num_rows = static_cast<int64_t>(last - first);
  g.columns.resize(columns.size());
  for (size_t c = 0; c < columns.size(); ++c) {
    DLIO_RETURN_NOT_OK(WriteColumnChunk(sink, columns[c], c, o, first, last, &g.columns[c]));
    g.total_byte_size += g.columns[c].meta.total_uncompressed_size;
  }
  meta->row_groups.push_back(std::move(g));
  return Status::OK();
}

}  // namespace

Status WriteParquet(File* file, const FileSpec& spec, const FormatOptions& options) {
  DLIO_ASSIGN_OR_RETURN(Codec codec, ParseParquetCompression(options.compression));
  const ParquetOptions pq = options.formats.Value<ParquetOptions>();
  const uint64_t rows = spec.sample_sizes.size();
  DLIO_ASSIGN_OR_RETURN(std::vector<ColumnLayout> columns,
                        WriterLayout(pq, rows == 0 ? 0 : spec.sample_sizes[0]));
  const uint64_t group_rows = std::min(kMaxRowGroupRows, std::max<uint64_t>(1, pq.row_group_size));
  ChunkOptions chunk_options;
  chunk_options.codec = codec;
  chunk_options.use_dictionary = pq.use_dictionary;
  chunk_options.seed = spec.seed;
  FileMetaData meta = Skeleton(columns, rows);
  Sink sink(file);
  DLIO_RETURN_NOT_OK(sink.Append(std::string(kMagic, kMagicBytes)));
  // The fork calls write_table once a generation batch, and each call starts new row groups.
  const uint64_t batch_rows = pq.generation_batch_size != 0
                                  ? pq.generation_batch_size
                                  : std::max<uint64_t>(1, pq.row_group_size);
  for (uint64_t batch = 0; batch < rows; batch += batch_rows) {
    const uint64_t batch_end = std::min(rows, batch + batch_rows);
    for (uint64_t first = batch; first < batch_end; first += group_rows) {
      DLIO_RETURN_NOT_OK(WriteRowGroup(&sink, columns, chunk_options, first,
                                       std::min(batch_end, first + group_rows), &meta));
    }
  }
  std::string footer = EncodeFileMetaData(meta);
  PutLe32(&footer, static_cast<uint32_t>(footer.size()));
  footer.append(kMagic, kMagicBytes);
  DLIO_RETURN_NOT_OK(sink.Append(footer));
  return sink.Flush();
}

}  // namespace dlio::format_internal::parquet
