// Constructors of the built-in formats (registered by name in register.cc).
#pragma once

#include <memory>

#include "dlio/format.h"

namespace dlio {
struct WorkloadConfig;
}  // namespace dlio

namespace dlio::format_internal {

std::unique_ptr<Format> NewNpyFormat();
std::unique_ptr<Format> NewNpzFormat();
std::unique_ptr<Format> NewIndexedBinaryFormat();
std::unique_ptr<Format> NewMmapIndexedBinaryFormat();
std::unique_ptr<Format> NewSyntheticFormat();
std::unique_ptr<Format> NewCsvFormat();
std::unique_ptr<Format> NewJpegFormat();
std::unique_ptr<Format> NewPngFormat();
// The hdf5 format; Unimplemented when dlio was built with DLIO_WITH_HDF5=OFF (the name stays
// registered so configs naming it get that message rather than "unknown format").
Result<std::unique_ptr<Format>> MakeHdf5Format();
std::unique_ptr<Format> NewTfRecordFormat();
std::unique_ptr<Format> NewParquetFormat();
// The parquet entry's validate hook: dataset.compression must be a codec parquet writes (none,
// snappy, gzip, zstd) and dataset.parquet.columns, when given, must read one column.
// InvalidArgument naming the key.
Status ValidateParquetConfig(const WorkloadConfig& config);
std::unique_ptr<Format> NewWebdatasetFormat();
std::unique_ptr<Format> NewSqliteFormat();  // sqlite/sqlite_format.cc
std::unique_ptr<Format> NewZipFormat();     // zip_format.cc
std::unique_ptr<Format> NewPtFormat();      // torch/pt_format.cc
// dataset.num_samples_per_file 1 and dataset.pt_pickle_bytes (torch/pt_format.cc).
Status ValidatePtConfig(const WorkloadConfig& config);
// dataset.webdataset_members spelled as extensions (webdataset/webdataset_format.cc).
Status ValidateWebdatasetConfig(const WorkloadConfig& config);
std::unique_ptr<Format> NewRawFormat();

// npz writer: members with a zip64 extra in their local headers, as np.savez writes them; with
// `force_zip64` the central directory's ZIP64 fields and end records too, even for small files
// (numpy and zipfile read both), so tests can exercise the ZIP64 paths without 4 GiB files.
Status WriteNpz(Storage* storage, const std::string& path, const FileSpec& spec,
                const FormatOptions& options, bool force_zip64);

}  // namespace dlio::format_internal
