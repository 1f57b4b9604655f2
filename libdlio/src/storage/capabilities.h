// What each built-in backend can do: one definition, read both by the backend's capabilities()
// and by its registry entry (register.cc), so the two never disagree.
#pragma once

#include "dlio/storage.h"

namespace dlio::storage_internal {

inline constexpr StorageCapabilities kPosixCapabilities{
    .host_files = true, .shared_write = true, .map_files = true};
inline constexpr StorageCapabilities kStdioCapabilities{.host_files = true};
inline constexpr StorageCapabilities kMpiioCapabilities{
    .host_files = true, .shared_write = true, .collective_reads = true, .needs_mpi = true};
inline constexpr StorageCapabilities kMemoryCapabilities{.in_process_memory = true};

// slow: what the storage it wraps can do, except writing shared files outside its Files and
// mapping files (both would bypass the latency it adds).
inline StorageCapabilities SlowCapabilities(StorageCapabilities inner) {
  inner.shared_write = false;
  inner.map_files = false;
  return inner;
}

}  // namespace dlio::storage_internal
