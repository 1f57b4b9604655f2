// Checks the chunks a read will touch before H5Dread does. libhdf5 1.10.8 trusts a chunk's stored
// size from the file's chunk index: it allocates a claimed size of gigabytes, and it copies a
// whole chunk out of an unfiltered chunk stored with fewer bytes (a heap over-read, silently
// returning whatever follows). The guard refuses such chunks with an error naming the file, the
// chunk and the offset. Each chunk is checked once per reader (one chunk-index lookup).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "dlio/status.h"
#include "format/hdf5/hdf5_internal.h"

namespace dlio::format_internal::hdf5 {

class ChunkGuard {
 public:
  ChunkGuard() = default;  // not chunked: checks nothing
  // For dataset `dset` of `rank` dimensions `dims` in a file of `file_size` bytes.
  ChunkGuard(hid_t dset, int rank, const std::array<hsize_t, H5S_MAX_RANK>& dims,
             uint64_t file_size);

  // OK when every chunk of the box [first, first + count) is stored inside the file and, without
  // filters, holds exactly one chunk's bytes. Corruption naming `path`, `dataset` and the chunk
  // otherwise. Call under the HDF5 lock.
  Status Check(hid_t dset, const hsize_t* first, const hsize_t* count, const std::string& path,
               const std::string& dataset);

 private:
  Status CheckChunk(hid_t dset, const std::array<hsize_t, H5S_MAX_RANK>& start,
                    const std::string& path, const std::string& dataset) const;
  // Index of the chunk at grid position `g` in checked_, or -1 when not cached.
  int64_t CacheIndex(const std::array<hsize_t, H5S_MAX_RANK>& g) const;

  bool chunked_ = false, filtered_ = false;
  int rank_ = 0;
  uint64_t file_size_ = 0, chunk_bytes_ = 0;
  std::array<hsize_t, H5S_MAX_RANK> chunk_{}, grid_{};
  std::vector<bool> checked_;  // per chunk of the grid, when it is small enough to keep
};

}  // namespace dlio::format_internal::hdf5
