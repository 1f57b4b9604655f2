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

  std::atomic<uint64_t> failed_copies{0};

  // Copies the counters into `out`; `reset` zeroes them.
  void Snapshot(CacheTierStats* out, bool reset);
};

// What a copy is valid for: the source file's size and, when the source has host files to stat,
// its modification time, identity (device, inode) and permission bits (0 otherwise): a copy of a
// file that was replaced, or whose permissions changed, is stale.
struct SourceStat {
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  uint64_t dev = 0;
  uint64_t ino = 0;
  uint32_t mode = 0;  // the permission bits (st_mode & 07777)
  bool operator==(const SourceStat& other) const = default;
};

// The size (through `source`) and, when `host_files`, the rest (stat(2)) of `path`.
Result<SourceStat> StatSource(Storage* source, bool host_files, const std::string& path);

// The permission bits of a directory tier's copy of a file of `stat`: at most the source's (its
// read and write bits, at most 0644; the owner may read), 0600 when the source has no host files.
uint32_t CopyModeOf(const SourceStat& stat);

// The tier options' checks of TieredCache::Make: InvalidArgument naming storage.tiers[i].<key>.
Status ValidateCacheOptions(const CacheOptions& options);

// The warning of tier `tier`'s first failed copy, to options.on_warning (else stderr).
void WarnCopyFailed(const CacheOptions& options, int tier, const std::string& tier_name,
                    const std::string& path, const Status& status);

// counter += n, saturating at UINT64_MAX (counts a client reports: they must never wrap).
void SaturatingAdd(std::atomic<uint64_t>& counter, uint64_t n);

// A whole file held in memory: a sealed memfd (so a cache server can hand out descriptors of it)
// mapped read-only, for in-process readers to copy from at memory speed. Unmapped and closed with
// its last holder: an evicted file stays readable by the readers (and descriptors) of it.
class MemoryBlock {
 public:
  // A block of `size` bytes, not yet sealed, filled through Write.
  static Result<std::unique_ptr<MemoryBlock>> Make(const std::string& path, uint64_t size);
  ~MemoryBlock();
  MemoryBlock(const MemoryBlock&) = delete;
  MemoryBlock& operator=(const MemoryBlock&) = delete;

  // Writes bytes of the file at `offset` (before Seal only). Errors name `path_`.
  Status Write(uint64_t offset, const uint8_t* data, size_t n);
  // Forbids any further change (F_SEAL_WRITE, SHRINK, GROW) and maps the bytes read-only.
  Status Seal();

  const uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }
  int fd() const { return fd_; }

 private:
  MemoryBlock(std::string path, int fd, uint64_t size)
      : path_(std::move(path)), fd_(fd), size_(size) {}
  const std::string path_;
  const int fd_;
  const uint64_t size_;
  const uint8_t* data_ = nullptr;  // the read-only mapping once sealed (null for an empty file)
};
using MemoryCopy = std::shared_ptr<const MemoryBlock>;

// A file opened for reading from a memory copy.
std::unique_ptr<File> NewMemoryCopyFile(const std::string& path, MemoryCopy data,
                                        LevelCounters* counters);
// A file opened for reading from another file (a directory tier's copy, the source), whose reads
// count to `counters`.
std::unique_ptr<File> NewCountedFile(const std::string& path, std::unique_ptr<File> inner,
                                     LevelCounters* counters);

}  // namespace dlio::cache_internal
