// A small dataset read one row per sample (reader.hdf5_lookup_dataset: `f['labels'][i]`, a table
// of coordinates or labels beside the samples), as h5py reads it: the dataset opened by name (a
// new dataset object, whose sieve buffer starts empty, so libhdf5 reads from the row to the end
// of a contiguous table, up to 64 KiB), one row selected and read. Shared by the h5py model's
// reader (io_models/hdf5_h5py_reader.cc) and the group-per-sample reader (hdf5_group_reader.cc).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "dlio/config_enums.h"
#include "dlio/status.h"
#include "format/hdf5/hdf5_chunk_guard.h"
#include "format/hdf5/hdf5_lib.h"
#include "format/hdf5/hdf5_reader.h"

namespace dlio::format_internal::hdf5 {

// The bytes of dlio's table /lookup (dataset.hdf5_lookup_rows x hdf5_lookup_row_bytes uint8) from
// its start: row r holds r's label (SampleLabel(seed, r)), little-endian, repeated over the row.
// Shared by the rows writer and the group-per-sample writer.
void FillLookupBytes(uint64_t seed, uint64_t row_bytes, uint8_t* dst, size_t n);

// A lookup dataset: where it is, how its rows are selected and how many bytes one holds.
struct LookupTable {
  std::string name;
  int rank = 0;
  std::array<hsize_t, H5S_MAX_RANK> dims{};
  Hid type;       // memory type = the stored type (no conversion)
  Hid mem_space;  // one row, 1-D
  std::optional<ChunkGuard> guard;
  uint64_t row_bytes = 0;
};

// Whether a lookup table's row is read before its sample's data (reader.hdf5_lookup_order): auto
// reads it before a sample of DLIO's rows and after a group-per-sample file's.
inline bool LookupBeforeSample(LookupOrder order, bool sample_groups) {
  return order == LookupOrder::kBefore || (order == LookupOrder::kAuto && !sample_groups);
}

// Checks `name` in the open `file` and describes it: NotFound naming it when the file has no
// such dataset; InvalidArgument for one without rows or with rows of more than 16 MiB;
// Unimplemented for a variable-length type; its filters and extent as every dataset's.
Result<LookupTable> OpenLookupTable(Hdf5Call& call, hid_t file, const ReaderInfo& info,
                                    const std::string& name);

// Row (i mod its rows) of `table`, whose dataset `dset` is open, into `row` (table->row_bytes);
// Corruption naming the file, the row and the dataset when libhdf5 cannot read it.
Status ReadLookupTableRow(Hdf5Call& call, hid_t dset, uint64_t i, const ReaderInfo& info,
                          LookupTable* table, uint8_t* row);

}  // namespace dlio::format_internal::hdf5
