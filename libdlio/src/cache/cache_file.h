// The pieces of TieredCache (dlio/cache.h) that do not need its lock: the per-level counters, the
// file a reader gets, and the source metadata a copy is checked against.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dlio/cache.h"
#include "dlio/storage.h"

namespace dlio::cache_internal {

// The counters of one level (a tier or the source); updated with relaxed atomics.
struct LevelCounters {
  std::atomic<uint64_t> hits{0}, misses{0}, read_through{0}, bytes_served{0}, bytes_copied{0};
  std::atomic<uint64_t> files_copied{0};
  std::atomic<uint64_t> evictions{0}, invalidations{0}, skipped_too_big{0};

  // Copies the counters into `out`; `reset` zeroes them.
  void Snapshot(CacheTierStats* out, bool reset);
};

// What a copy is valid for: the source file's size and modification time (0 when the source has
// no host files to stat).
struct SourceStat {
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  bool operator==(const SourceStat& other) const = default;
};

// The size (through `source`) and, when `host_files`, the mtime (stat(2)) of `path`.
Result<SourceStat> StatSource(Storage* source, bool host_files, const std::string& path);

// A whole file held in memory, shared by the tier and the readers of it (an evicted file stays
// readable by those that opened it).
using MemoryCopy = std::shared_ptr<const std::vector<uint8_t>>;

// A file opened for reading from a memory copy.
std::unique_ptr<File> NewMemoryCopyFile(const std::string& path, MemoryCopy data,
                                        LevelCounters* counters);
// A file opened for reading from another file (a directory tier's copy, the source), whose reads
// count to `counters`.
std::unique_ptr<File> NewCountedFile(const std::string& path, std::unique_ptr<File> inner,
                                     LevelCounters* counters);

}  // namespace dlio::cache_internal
