#include "format/hdf5/hdf5_chunk_guard.h"

namespace dlio::format_internal::hdf5 {
namespace {

// Chunks a reader remembers as checked (one bit each); larger grids are checked on every read.
constexpr uint64_t kMaxCachedChunks = uint64_t{1} << 24;

}  // namespace

ChunkGuard::ChunkGuard(hid_t dset, int rank, const std::array<hsize_t, H5S_MAX_RANK>& dims,
                       uint64_t file_size)
    : rank_(rank), file_size_(file_size) {
  Hid dcpl(H5Dget_create_plist(dset));
  Hid type(H5Dget_type(dset));
  if (!dcpl.valid() || !type.valid() || rank <= 0 || H5Pget_layout(dcpl.get()) != H5D_CHUNKED ||
      H5Pget_chunk(dcpl.get(), H5S_MAX_RANK, chunk_.data()) != rank) {
    H5Eclear2(H5E_DEFAULT);
    return;
  }
  filtered_ = H5Pget_nfilters(dcpl.get()) != 0;
  uint64_t bytes = H5Tget_size(type.get()), chunks = 1;
  for (int k = 0; k < rank; ++k) {
    if (chunk_[k] == 0) return;  // libhdf5 refuses such a file; nothing to guard
    grid_[k] = dims[k] / chunk_[k] + (dims[k] % chunk_[k] != 0);
    if (__builtin_mul_overflow(bytes, chunk_[k], &bytes)) bytes = UINT64_MAX;
    if (__builtin_mul_overflow(chunks, grid_[k], &chunks)) chunks = UINT64_MAX;
  }
  chunked_ = true;
  chunk_bytes_ = bytes;
  if (chunks <= kMaxCachedChunks) checked_.assign(chunks, false);
}

int64_t ChunkGuard::CacheIndex(const std::array<hsize_t, H5S_MAX_RANK>& g) const {
  if (checked_.empty()) return -1;
  uint64_t index = 0;
  for (int k = 0; k < rank_; ++k) index = index * grid_[k] + g[k];
  return static_cast<int64_t>(index);
}

Status ChunkGuard::Check(hid_t dset, const hsize_t* first, const hsize_t* count,
                         const std::string& path, const std::string& dataset) {
  if (!chunked_) return Status::OK();
  std::array<hsize_t, H5S_MAX_RANK> lo{}, hi{}, g{};
  for (int k = 0; k < rank_; ++k) {
    if (count[k] == 0) return Status::OK();
    lo[k] = first[k] / chunk_[k];
    hi[k] = (first[k] + count[k] - 1) / chunk_[k];
    g[k] = lo[k];
  }
  for (;;) {  // every grid position in [lo, hi], last dimension fastest
    const int64_t cached = CacheIndex(g);
    if (cached < 0 || static_cast<uint64_t>(cached) >= checked_.size() || !checked_[cached]) {
      std::array<hsize_t, H5S_MAX_RANK> start{};
      for (int k = 0; k < rank_; ++k) start[k] = g[k] * chunk_[k];
      DLIO_RETURN_NOT_OK(CheckChunk(dset, start, path, dataset));
      if (cached >= 0 && static_cast<uint64_t>(cached) < checked_.size()) checked_[cached] = true;
    }
    int k = rank_ - 1;
    while (k >= 0 && g[k] == hi[k]) {
      g[k] = lo[k];
      --k;
    }
    if (k < 0) return Status::OK();
    ++g[k];
  }
}

Status ChunkGuard::CheckChunk(hid_t dset, const std::array<hsize_t, H5S_MAX_RANK>& start,
                              const std::string& path, const std::string& dataset) const {
  unsigned mask = 0;
  haddr_t addr = HADDR_UNDEF;
  hsize_t size = 0;
  if (H5Dget_chunk_info_by_coord(dset, start.data(), &mask, &addr, &size) < 0 ||
      addr == HADDR_UNDEF) {
    H5Eclear2(H5E_DEFAULT);  // never written (fill value) or not found: H5Dread decides
    return Status::OK();
  }
  std::string where = StrCat(path, ": ", dataset, " chunk at element (");
  for (int k = 0; k < rank_; ++k) where += StrCat(k ? ", " : "", start[k]);
  where += StrCat(") stored at file offset ", addr, ", ", size, " bytes");
  if (addr > file_size_ || size > file_size_ - addr) {
    return Status::Corruption(where, ": past the end of the file (", file_size_, " bytes)");
  }
  if (!filtered_ && size != chunk_bytes_) {
    return Status::Corruption(where, ": an unfiltered chunk holds ", chunk_bytes_, " bytes");
  }
  return Status::OK();
}

}  // namespace dlio::format_internal::hdf5
