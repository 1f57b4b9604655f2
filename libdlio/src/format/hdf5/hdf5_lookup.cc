#include "format/hdf5/hdf5_lookup.h"

#include <algorithm>

#include "dlio/str_cat.h"
#include "format/content.h"
#include "format/hdf5/hdf5_internal.h"
#include "format/io_util.h"

namespace dlio::format_internal::hdf5 {
namespace {

// The most bytes a row of the lookup dataset may hold: it stands for a small table.
constexpr uint64_t kMaxLookupRowBytes = 16u << 20;

}  // namespace

void FillLookupBytes(uint64_t seed, uint64_t row_bytes, uint8_t* dst, size_t n) {
  for (size_t byte = 0; byte < n; ++byte) {
    const auto label = static_cast<uint64_t>(SampleLabel(seed, byte / row_bytes));
    dst[byte] = static_cast<uint8_t>(label >> (8 * (byte % row_bytes % sizeof label)));
  }
}

Result<LookupTable> OpenLookupTable(Hdf5Call& call, hid_t file, const ReaderInfo& info,
                                    const std::string& name) {
  const std::string what = info.path + ": reader.hdf5_lookup_dataset " + name;
  DLIO_ASSIGN_OR_RETURN(Hid probe, OpenDatasetIfAny(call, file, info.path, name));
  if (!probe.valid()) {
    return Status::NotFound(what, ": no such dataset in the file");
  }
  Hid dcpl(H5Dget_create_plist(probe.get()));
  if (!dcpl.valid()) return call.Error(StatusCode::kCorruption, what + ": creation properties");
  DLIO_RETURN_NOT_OK(CheckFiltersAvailable(dcpl.get(), what));
  DLIO_RETURN_NOT_OK(CheckDataset(probe.get(), what, info.file_size, dcpl.get()));
  LookupTable l;
  l.name = name;
  l.type = Hid(H5Dget_type(probe.get()));
  const Extent e = DatasetExtent(probe.get());
  if (!l.type.valid() || e.rank < 1 || e.dims[0] == 0) {
    return Status::InvalidArgument(what, ": needs a dataset of rank >= 1 with rows, found rank ",
                                   e.rank, e.rank >= 1 ? StrCat(" of ", e.dims[0], " rows") : "");
  }
  if (H5Tdetect_class(l.type.get(), H5T_VLEN) > 0 || H5Tis_variable_str(l.type.get()) > 0) {
    return Status::Unimplemented(what, " has a variable-length type (", DtypeString(l.type.get()),
                                 ")");
  }
  l.rank = e.rank;
  l.dims = e.dims;
  Extent row;
  row.rank = e.rank - 1;
  std::copy(e.dims.begin() + 1, e.dims.end(), row.dims.begin());
  uint64_t elements = 1;
  for (int k = 0; k < row.rank; ++k) elements *= row.dims[k];
  if (!DeclaredBytes(row, H5Tget_size(l.type.get()), &l.row_bytes) ||
      l.row_bytes > kMaxLookupRowBytes) {
    return Status::InvalidArgument(what, ": rows of shape ", JsonDims(row.dims.data(), row.rank),
                                   " are larger than ", kMaxLookupRowBytes,
                                   " bytes (the lookup dataset stands for a small table)");
  }
  const hsize_t mem_dims = std::max<uint64_t>(elements, 1);
  l.mem_space = Hid(H5Screate_simple(1, &mem_dims, nullptr));
  if (!l.mem_space.valid()) return call.Error(StatusCode::kInternal, what + ": memory dataspace");
  return l;
}

Status ReadLookupTableRow(Hdf5Call& call, hid_t dset, uint64_t i, const ReaderInfo& info,
                          LookupTable* table, uint8_t* row) {
  LookupTable& l = *table;
  std::array<hsize_t, H5S_MAX_RANK> first{}, count = l.dims;
  first[0] = i % l.dims[0];
  count[0] = 1;
  Hid space(H5Dget_space(dset));
  if (!space.valid() || H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, first.data(), nullptr,
                                            count.data(), nullptr) < 0) {
    return call.Error(StatusCode::kInternal, info.path + ": selecting a row of " + l.name);
  }
  if (!l.guard) l.guard.emplace(dset, l.rank, l.dims, info.file_size);
  DLIO_RETURN_NOT_OK(l.guard->Check(dset, first.data(), count.data(), info.path,
                                    "reader.hdf5_lookup_dataset " + l.name));
  if (H5Dread(dset, l.type.get(), l.mem_space.get(), space.get(), H5P_DEFAULT, row) < 0) {
    return call.Error(StatusCode::kCorruption, StrCat(info.path, ": reading row ", first[0], " of ",
                                                      l.name, " (reader.hdf5_lookup_dataset)"));
  }
  return Status::OK();
}

}  // namespace dlio::format_internal::hdf5
