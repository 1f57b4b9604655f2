// Datasets of files we read: finding them, opening them with a fitted chunk cache, checking
// their extent against what the file stores, where a chunk lies, whether libhdf5 has their
// filters, and reading small integer vectors.
#include <new>
#include <set>

#include "format/hdf5/hdf5_internal.h"

namespace dlio::format_internal::hdf5 {

Result<Hid> OpenDatasetIfAny(Hdf5Call& call, hid_t file, const std::string& path,
                             const std::string& name) {
  if (H5Lexists(file, name.c_str(), H5P_DEFAULT) <= 0) {
    call.Clear();
    return Hid();
  }
  Hid obj(H5Oopen(file, name.c_str(), H5P_DEFAULT));
  if (!obj.valid())
    return call.Error(StatusCode::kCorruption, path + ": " + name + ": cannot open");
  if (H5Iget_type(obj.get()) != H5I_DATASET) return Hid();
  return obj;
}

Extent DatasetExtent(hid_t dset) {
  Extent e;
  Hid space(H5Dget_space(dset));
  if (space.valid()) e.rank = H5Sget_simple_extent_dims(space.get(), e.dims.data(), nullptr);
  return e;
}

namespace {

// Bytes of one chunk of `dset` (0 when not chunked; saturated at 2^64 - 1).
uint64_t ChunkBytes(hid_t dset, hid_t dcpl) {
  Hid type(H5Dget_type(dset));
  if (!type.valid() || H5Pget_layout(dcpl) != H5D_CHUNKED) return 0;
  std::array<hsize_t, H5S_MAX_RANK> chunk{};
  const int rank = H5Pget_chunk(dcpl, H5S_MAX_RANK, chunk.data());
  uint64_t bytes = H5Tget_size(type.get());
  for (int k = 0; k < rank; ++k) {
    if (__builtin_mul_overflow(bytes, chunk[k], &bytes)) return UINT64_MAX;
  }
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
  return StrCat(" (its chunk at file offset ", addr, ", ", size, " bytes stored)");
}

// Unimplemented naming the filter when `dset` needs one this libhdf5 lacks (h5py's lzf, or a
// plugin filter), rather than an opaque failure at the first sample.
Status CheckFiltersAvailable(hid_t dcpl, const std::string& what) {
  const int nf = H5Pget_nfilters(dcpl);
  for (int k = 0; k < nf; ++k) {
    unsigned flags = 0, config = 0, cd[8] = {};
    size_t nelmts = 8;
    char name[64] = {};
    const H5Z_filter_t id = H5Pget_filter2(dcpl, static_cast<unsigned>(k), &flags, &nelmts, cd,
                                           sizeof name, name, &config);
    if (id >= 0 && H5Zfilter_avail(id) <= 0) {
      H5Eclear2(H5E_DEFAULT);
      return Status::Unimplemented(
          what, " is stored with HDF5 filter ", id, " ('", name,
          "'), which this libhdf5 cannot decode",
          (id == 32000 ? " (h5py's lzf: re-save the data with gzip)" : ""));
    }
  }
  return Status::OK();
}

Result<Hid> OpenForReading(Hdf5Call& call, hid_t file, const std::string& path,
                           const std::string& name, bool one_chunk_cache, uint64_t file_size) {
  const std::string what = path + ": " + name;
  DLIO_ASSIGN_OR_RETURN(Hid probe, OpenDatasetIfAny(call, file, path, name));
  if (!probe.valid()) return Status::NotFound(path + ": no dataset " + name);
  Hid dcpl(H5Dget_create_plist(probe.get()));
  if (!dcpl.valid()) return call.Error(StatusCode::kCorruption, what + ": creation properties");
  DLIO_RETURN_NOT_OK(CheckFiltersAvailable(dcpl.get(), what));
  DLIO_RETURN_NOT_OK(CheckDataset(probe.get(), what, file_size, dcpl.get()));
  const uint64_t chunk = ChunkBytes(probe.get(), dcpl.get());
  probe.Reset();
  DLIO_ASSIGN_OR_RETURN(Hid dapl, ChunkCacheDapl(call, chunk, one_chunk_cache && chunk > 0));
  Hid dset(H5Dopen2(file, name.c_str(), dapl.get()));
  if (!dset.valid()) return call.Error(StatusCode::kCorruption, what + ": opening");
  return dset;
}

// Reads a whole 1-D integer dataset as uint64.
Result<std::vector<uint64_t>> ReadU64s(Hdf5Call& call, hid_t dset, const std::string& what,
                                       uint64_t file_size) {
  const Extent e = DatasetExtent(dset);
  if (e.rank != 1) {
    return Status::Corruption(what, ": expected a 1-D dataset, found rank ", e.rank);
  }
  DLIO_RETURN_NOT_OK(CheckDataset(dset, what, file_size));
  // CheckDataset bounds the length by the file's size (compressed: 1032 times it); memory may
  // still be short of it.
  std::vector<uint64_t> v;
  try {
    v.resize(e.dims[0]);
  } catch (const std::bad_alloc&) {
    return Status::ResourceExhausted(what, ": cannot allocate its ", e.dims[0], " entries");
  }
  if (!v.empty() && H5Dread(dset, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0) {
    return call.Error(StatusCode::kCorruption, what + ": reading");
  }
  return v;
}

bool IsIntegerVector(hid_t dset) {
  Hid type(H5Dget_type(dset));
  return type.valid() && H5Tget_class(type.get()) == H5T_INTEGER && DatasetExtent(dset).rank == 1;
}

namespace {

// The depth-first walk of ListDatasets.
struct Walk {
  Hdf5Call* call;
  const std::string* path;  // the file, for problems
  DatasetList* out;
  std::set<haddr_t> groups;  // visited: hard links may form cycles
  size_t links = 0;
};

struct WalkFrame {
  Walk* walk;
  std::string prefix;
  int depth;
};

herr_t WalkLink(hid_t group, const char* name, const H5L_info_t* info, void* data) {
  auto* frame = static_cast<WalkFrame*>(data);
  Walk& w = *frame->walk;
  if (w.out->names.size() >= kMaxDatasets || ++w.links > kMaxLinks) return 1;  // stop
  if (info->type != H5L_TYPE_HARD) return 0;  // soft/external links may dangle or loop
  const std::string path = frame->prefix + "/" + name;
  Hid obj(H5Oopen(group, name, H5P_DEFAULT));
  if (!obj.valid()) {
    w.out->problems.push_back(
        w.call->Error(StatusCode::kCorruption, *w.path + ": " + path + ": cannot open").message());
    return 0;
  }
  const H5I_type_t type = H5Iget_type(obj.get());
  if (type == H5I_DATASET) {
    w.out->names.push_back(path);
    return 0;
  }
  H5O_info_t object{};
  if (type != H5I_GROUP || frame->depth >= kMaxGroupDepth ||
      H5Oget_info2(obj.get(), &object, H5O_INFO_BASIC) < 0 ||
      !w.groups.insert(object.addr).second) {
    H5Eclear2(H5E_DEFAULT);
    return 0;
  }
  WalkFrame inner{&w, path, frame->depth + 1};
  if (H5Literate(obj.get(), H5_INDEX_NAME, H5_ITER_INC, nullptr, &WalkLink, &inner) < 0) {
    w.out->problems.push_back(
        w.call->Error(StatusCode::kCorruption, *w.path + ": group " + path + ": cannot list it")
            .message());
  }
  return 0;
}

}  // namespace

DatasetList ListDatasets(Hdf5Call& call, hid_t file, const std::string& path) {
  DatasetList out;
  Walk walk{&call, &path, &out, {}, 0};
  H5O_info_t root{};
  if (H5Oget_info2(file, &root, H5O_INFO_BASIC) >= 0) walk.groups.insert(root.addr);
  WalkFrame frame{&walk, "", 0};
  if (H5Literate(file, H5_INDEX_NAME, H5_ITER_INC, nullptr, &WalkLink, &frame) < 0) {
    out.problems.push_back(
        call.Error(StatusCode::kCorruption, path + ": the root group cannot be listed").message());
  }
  H5Eclear2(H5E_DEFAULT);
  return out;
}

}  // namespace dlio::format_internal::hdf5
