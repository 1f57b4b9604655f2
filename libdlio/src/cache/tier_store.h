// Where a tier keeps its copies: process memory or files in a directory (dlio/cache.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "cache/cache_file.h"
#include "dlio/storage.h"

namespace dlio::cache_internal {

// One complete copy: the bytes (memory tier) or the copy's file (directory tier).
struct TierCopy {
  MemoryCopy data;
  std::string file;
};

// Safe for concurrent use. Does no accounting: TieredCache reserves capacity before MakeCopy.
class TierStore {
 public:
  virtual ~TierStore() = default;
  const std::string& name() const { return name_; }
  uint64_t capacity() const { return capacity_; }

  // Copies the `size` bytes of the source's `path`, in reads of `chunk` bytes; a directory tier
  // writes them, with permission bits `mode`, to a temporary name and renames it once complete,
  // so no partial copy ever has a copy's name. Cancelled when `stop` becomes true; an error
  // naming the path when the source does not hold exactly `size` bytes.
  virtual Result<TierCopy> MakeCopy(Storage* source, const std::string& path, uint64_t size,
                                    uint32_t mode, size_t chunk, const std::atomic<bool>* stop) = 0;
  // A file reading the copy, reporting `path` and counting to `counters`.
  virtual Result<std::unique_ptr<File>> OpenCopy(const std::string& path, const TierCopy& copy,
                                                 LevelCounters* counters) = 0;
  // A new read-only, close-on-exec descriptor of the complete copy with its own offset (a cache
  // server hands it to a client); it keeps reading the copy after Discard.
  virtual Result<OwnedFd> OpenCopyFd(const std::string& path, const TierCopy& copy) = 0;
  // Frees the copy (readers that opened it keep reading it).
  virtual void Discard(const TierCopy& copy) = 0;

 protected:
  TierStore(std::string name, uint64_t capacity) : name_(std::move(name)), capacity_(capacity) {}

 private:
  const std::string name_;
  const uint64_t capacity_;
};

// The store of `options`. A directory tier creates its folder (0700) and dlio's folder in it
// (kCacheDirName, 0700, with its marker; an existing one without it is refused untouched), takes
// the lock file there (another cache holding it: FailedPrecondition naming the folder and
// storage.tiers[index]) and removes the copies and temporaries a cache that ended without
// cleaning up left there; nothing outside dlio's folder is touched. A capacity above the size of
// the folder's file system is refused (InvalidArgument naming storage.tiers[index].capacity_bytes).
Result<std::unique_ptr<TierStore>> OpenTierStore(const CacheTierOptions& options, int index);

}  // namespace dlio::cache_internal
