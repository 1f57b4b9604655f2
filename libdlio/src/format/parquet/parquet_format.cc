// parquet: Apache Parquet files, one sample per row (as the MLPerf Storage fork's parquet reader
// counts samples). Writer: parquet_writer.cc; reader: parquet_reader.cc; docs/formats.md.
#include <algorithm>

#include "dlio/config.h"
#include "format/formats.h"
#include "format/io_util.h"
#include "format/parquet/parquet_chunk.h"
#include "format/parquet/parquet_codec.h"
#include "format/parquet/parquet_options.h"
#include "format/parquet/parquet_schema.h"
#include "format/parquet/parquet_writer.h"
#include "io_models/model_readers.h"

namespace dlio::format_internal {
namespace {

// A row group's read columns as our writer stores them for `options` (parquet_writer.cc), plus
// 1/64 and 64 KiB for page headers and levels; 0 when unknown or over 64 MiB (a reader then
// grows its landing buffer at the first group, as without a hint).
uint64_t ParquetLandingBytes(const FormatOptions& options) {
  constexpr uint64_t kMostLanding = uint64_t{64} << 20;
  const ParquetOptions pq = options.formats.Value<ParquetOptions>();
  auto layout = parquet::WriterLayout(pq, options.record_length_bytes);
  if (!layout.ok()) return 0;
  uint64_t rows = std::min(parquet::kMaxRowGroupRows, std::max<uint64_t>(1, pq.row_group_size));
  if (pq.generation_batch_size != 0) rows = std::min(rows, pq.generation_batch_size);
  if (options.samples_per_file != 0) rows = std::min(rows, options.samples_per_file);
  uint64_t row_bytes = 0;
  for (const parquet::ColumnLayout& c : *layout) {
    if (c.read) row_bytes += c.width != 0 ? c.width : c.value_size;
  }
  if (row_bytes == 0 || row_bytes > kMostLanding / rows) return 0;
  const uint64_t group = rows * row_bytes;
  const uint64_t bytes = group + group / 64 + (uint64_t{64} << 10);
  return bytes <= kMostLanding ? bytes : 0;
}

class ParquetFormat final : public Format {
 public:
  ParquetFormat() {
    readers_.Add(IoModel::kNative, OpenNative).Add(IoModel::kPyarrow, OpenPyarrow);
  }

  std::string name() const override { return "parquet"; }
  std::string extension() const override { return "parquet"; }
  // One size per file: the rows of a file share its columns' widths.
  bool variable_sample_sizes() const override { return false; }
  // With dataset.parquet.columns a row is the columns' values, whatever the record length.
  bool exact_sample_sizes() const override { return false; }

  Status Write(Storage* storage, const std::string& path, const FileSpec& spec,
               const FormatOptions& options) const override {
    DLIO_RETURN_NOT_OK(parquet::ParseParquetCompression(options.compression).status());
    return WriteNewFile(storage, path,
                        [&](File* file) { return parquet::WriteParquet(file, spec, options); });
  }

  FormatCapabilities capabilities() const override {
    FormatCapabilities c;
    c.io_models = {IoModel::kPyarrow};
    return c;
  }
  std::vector<IoModel> reader_models() const override { return readers_.models(); }

  Result<std::unique_ptr<FormatReader>> Open(Storage* storage, const std::string& path,
                                             const FormatOptions& options) const override {
    return readers_.Open(capabilities(), storage, path, options);
  }

  // The native reader lands a row group's chunks (parquet_reader.cc): a group of the rows our
  // writer puts in one, of the columns read, with room for page headers and levels.
  uint64_t landing_bytes(const FormatOptions& options) const override {
    if (ResolveIoModel(options.io_model, capabilities()) != IoModel::kNative) return 0;
    return ParquetLandingBytes(options);
  }

 private:
  static Result<std::unique_ptr<FormatReader>> OpenNative(Storage* storage, const std::string& path,
                                                          const FormatOptions& options) {
    return parquet::OpenParquet(storage, path, options);
  }
  static Result<std::unique_ptr<FormatReader>> OpenPyarrow(Storage* storage,
                                                           const std::string& path,
                                                           const FormatOptions& options) {
    return parquet::OpenParquet(storage, path, options, true);
  }

  io_models::ModelReaders readers_;
};

}  // namespace

std::unique_ptr<Format> NewParquetFormat() { return std::make_unique<ParquetFormat>(); }

Status ValidateParquetConfig(const WorkloadConfig& c) {
  // The writer's own check (Write), asked before anything runs.
  DLIO_RETURN_NOT_OK(parquet::ParseParquetCompression(c.dataset.compression).status());
  const std::vector<ParquetColumnOptions> columns =
      c.dataset.formats.Value<ParquetOptions>().columns;
  const bool any_read = std::any_of(columns.begin(), columns.end(),
                                    [](const ParquetColumnOptions& col) { return col.read; });
  if (!columns.empty() && !any_read) {
    return Status::InvalidArgument("dataset.parquet.columns: no column has read: true");
  }
  return Status::OK();
}

}  // namespace dlio::format_internal
