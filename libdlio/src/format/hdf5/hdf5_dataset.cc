// Datasets of files we read: opening them with a fitted chunk cache, their extent, where a chunk
// lies, whether libhdf5 has their filters, and reading small integer vectors.
#include "format/hdf5/hdf5_internal.h"

namespace dlio::format_internal::hdf5 {

// Opens `name` if it is a dataset (invalid Hid otherwise, error stack cleared).
Hid OpenDatasetIfAny(hid_t file, const std::string& name, hid_t dapl) {
  if (H5Lexists(file, name.c_str(), H5P_DEFAULT) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    return Hid();
  }
  Hid obj(H5Oopen(file, name.c_str(), H5P_DEFAULT));
  if (!obj.valid() || H5Iget_type(obj.get()) != H5I_DATASET) {
    H5Eclear2(H5E_DEFAULT);
    return Hid();
  }
  if (dapl == H5P_DEFAULT) return obj;
  obj.Reset();
  Hid dset(H5Dopen2(file, name.c_str(), dapl));
  if (!dset.valid()) H5Eclear2(H5E_DEFAULT);
  return dset;
}

Extent DatasetExtent(hid_t dset) {
  Extent e;
  Hid space(H5Dget_space(dset));
  if (space.valid()) e.rank = H5Sget_simple_extent_dims(space.get(), e.dims.data(), nullptr);
  return e;
}

namespace {

// Bytes of one chunk of `dset` (0 when not chunked).
uint64_t ChunkBytes(hid_t dset) {
  Hid dcpl(H5Dget_create_plist(dset));
  Hid type(H5Dget_type(dset));
  if (!dcpl.valid() || !type.valid() || H5Pget_layout(dcpl.get()) != H5D_CHUNKED) return 0;
  std::array<hsize_t, H5S_MAX_RANK> chunk{};
  const int rank = H5Pget_chunk(dcpl.get(), H5S_MAX_RANK, chunk.data());
  uint64_t bytes = H5Tget_size(type.get());
  for (int k = 0; k < rank; ++k) bytes *= chunk[k];
  return bytes;
}

}  // namespace

// For errors: " (its chunk at file offset X, N bytes stored)" for the chunk holding element
// `coord` of a chunked dataset, "" otherwise. HDF5's own message does not say where the bad
// bytes are.
std::string ChunkWhere(hid_t dset, const hsize_t* coord, int rank) {
  Hid dcpl(H5Dget_create_plist(dset));
  std::array<hsize_t, H5S_MAX_RANK> chunk{}, start{};
  if (!dcpl.valid() || H5Pget_layout(dcpl.get()) != H5D_CHUNKED ||
      H5Pget_chunk(dcpl.get(), H5S_MAX_RANK, chunk.data()) != rank) {
    return "";
  }
  for (int k = 0; k < rank; ++k) start[k] = chunk[k] ? coord[k] / chunk[k] * chunk[k] : 0;
  unsigned mask = 0;
  haddr_t addr = HADDR_UNDEF;
  hsize_t size = 0;
  if (H5Dget_chunk_info_by_coord(dset, start.data(), &mask, &addr, &size) < 0 ||
      addr == HADDR_UNDEF) {
    H5Eclear2(H5E_DEFAULT);
    return "";
  }
  return " (its chunk at file offset " + std::to_string(addr) + ", " + std::to_string(size) +
         " bytes stored)";
}

// Unimplemented naming the filter when `dset` needs one this libhdf5 lacks (h5py's lzf, or a
// plugin filter), rather than an opaque failure at the first sample.
Status CheckFiltersAvailable(hid_t dset, const std::string& what) {
  Hid dcpl(H5Dget_create_plist(dset));
  const int nf = dcpl.valid() ? H5Pget_nfilters(dcpl.get()) : 0;
  for (int k = 0; k < nf; ++k) {
    unsigned flags = 0, config = 0, cd[8] = {};
    size_t nelmts = 8;
    char name[64] = {};
    const H5Z_filter_t id = H5Pget_filter2(dcpl.get(), static_cast<unsigned>(k), &flags, &nelmts,
                                           cd, sizeof name, name, &config);
    if (id >= 0 && H5Zfilter_avail(id) <= 0) {
      H5Eclear2(H5E_DEFAULT);
      return Status::Unimplemented(
          what + " is stored with HDF5 filter " + std::to_string(id) + " ('" + name +
          "'), which this libhdf5 cannot decode" +
          (id == 32000 ? " (h5py's lzf: re-save the data with gzip)" : ""));
    }
  }
  return Status::OK();
}

// Opens `name` for reading with a chunk cache fitted to its chunks.
Result<Hid> OpenForReading(Hdf5Call& call, hid_t file, const std::string& path,
                           const std::string& name, bool one_chunk_cache) {
  Hid probe = OpenDatasetIfAny(file, name);
  if (!probe.valid()) return Status::NotFound(path + ": no dataset " + name);
  const uint64_t chunk = ChunkBytes(probe.get());
  probe.Reset();
  DLIO_ASSIGN_OR_RETURN(Hid dapl, ChunkCacheDapl(call, chunk, one_chunk_cache && chunk > 0));
  Hid dset(H5Dopen2(file, name.c_str(), dapl.get()));
  if (!dset.valid()) return call.Error(StatusCode::kCorruption, path + ": opening " + name);
  return dset;
}

// Reads a whole 1-D integer dataset as uint64.
Result<std::vector<uint64_t>> ReadU64s(Hdf5Call& call, hid_t dset, const std::string& what) {
  const Extent e = DatasetExtent(dset);
  if (e.rank != 1) {
    return Status::Corruption(what + ": expected a 1-D dataset, found rank " +
                              std::to_string(e.rank));
  }
  std::vector<uint64_t> v(e.dims[0]);
  if (!v.empty() && H5Dread(dset, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0) {
    return call.Error(StatusCode::kCorruption, what + ": reading");
  }
  return v;
}

bool IsIntegerVector(hid_t dset) {
  Hid type(H5Dget_type(dset));
  return type.valid() && H5Tget_class(type.get()) == H5T_INTEGER && DatasetExtent(dset).rank == 1;
}

}  // namespace dlio::format_internal::hdf5
