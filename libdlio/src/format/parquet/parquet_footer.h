// Opening a parquet file, before any row group is read: the footer's read and decode, its row
// counts' checks and the columns a reader reads (parquet_reader.cc's OpenParquet).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dlio/status.h"
#include "dlio/storage.h"
#include "format/parquet/parquet_meta.h"
#include "format/parquet/parquet_options.h"
#include "format/parquet/parquet_schema.h"

namespace dlio::format_internal::parquet {

// Reads and decodes the footer: the tail, then the metadata it points at. `tail_bytes`: how much
// the first read takes from the end (8 natively; pyarrow's min(size, 64 KiB), the metadata then
// read again only when it does not fit in them). *data_end: where the footer begins.
Result<FileMetaData> ReadFooter(File* file, uint64_t size, const std::string& path,
                                uint64_t tail_bytes, uint64_t* data_end);

// Checks the row counts: none negative, and they add up to num_rows.
Status CheckRows(const FileMetaData& m, const std::string& path, uint64_t footer_offset);

// The columns to read: those of ParquetOptions::columns with read: true (all when none is set).
Result<std::vector<size_t>> SelectColumns(const std::vector<ColumnLayout>& columns,
                                          const ParquetOptions& options, const std::string& path);

}  // namespace dlio::format_internal::parquet
