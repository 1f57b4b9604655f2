// The parquet writer and reader entry points (parquet_writer.cc, parquet_reader.cc).
#pragma once

#include <memory>
#include <string>

#include "dlio/format.h"
#include "dlio/storage.h"

namespace dlio::format_internal::parquet {

// Writes a parquet file of spec.sample_sizes.size() rows to `file` (created by the caller):
// "PAR1", row groups of ParquetOptions::row_group_size rows whose column chunks are laid out as
// pyarrow's defaults lay them out (parquet_chunk.h: dictionary encoding with PLAIN fallback,
// ParquetOptions::use_dictionary; pages v1 compressed with dataset.compression), then the footer.
Status WriteParquet(File* file, const FileSpec& spec, const FormatOptions& options);

// Opens `path` for reading (footer read and validated here). `pyarrow`: with the requests of
// reader.io_model pyarrow (io_models/pyarrow_read.h) instead of native's.
Result<std::unique_ptr<FormatReader>> OpenParquet(Storage* storage, const std::string& path,
                                                  const FormatOptions& options,
                                                  bool pyarrow = false);

}  // namespace dlio::format_internal::parquet
