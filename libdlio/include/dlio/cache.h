// TieredCache: whole files of a source Storage copied into faster tiers (memory, a local
// directory) in the spirit of MONARCH, with a choice of placement and eviction policy, so that
// later reads are served from the fastest tier holding the file. The `tiered` storage
// (storage.storage_type: tiered) is a Storage decorator over one; docs/caching.md describes both.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dlio/cache_options.h"
#include "dlio/status.h"
#include "dlio/storage.h"

namespace dlio {

// CachePolicyKind, CacheTierOptions and the tiered storage's TieredOptions: dlio/cache_options.h.

// "monarch", "lru", "clairvoyant", "clairvoyant_static" (docs and errors).
const char* CachePolicyName(CachePolicyKind kind);
// The kind named `name`; InvalidArgument naming storage.cache_policy otherwise.
Result<CachePolicyKind> ParseCachePolicy(const std::string& name);

// One event of the cache, for traces. The tiered storage records each in category "cache" with
// the file's path, offset = the tier (-1: the source) and count = the file's bytes.
struct CacheEvent {
  const char* name = "";  // string literals: "cache.hit" (an open served by a tier), "cache.miss"
                          // (an open that found no complete copy), "cache.copy" (a copy
                          // completed), "cache.evict", "cache.invalidate" (a stale copy dropped)
  const std::string* path = nullptr;
  int tier = -1;
  uint64_t bytes = 0;
  int64_t dur_ns = 0;  // cache.copy: how long the copy took (it ended when reported); else 0
};

struct CacheOptions {
  std::vector<CacheTierOptions> tiers;  // fastest first; the source is the last level
  CachePolicyKind policy = CachePolicyKind::kLru;
  size_t copy_chunk_bytes = 4 << 20;  // bytes per source read of a copy
  // Called (with the cache's lock held: do not call the cache) for each file evicted from a tier;
  // tests and traces.
  std::function<void(int tier, const std::string& path)> on_evict;
  // Called for each CacheEvent, from any thread, maybe with the cache's lock held (do not call the
  // cache); the tiered storage sets it to trace them.
  std::function<void(const CacheEvent&)> on_event;
  // Where warnings go (the first failed copy of each tier), from any thread, maybe with the
  // cache's lock held; null: stderr.
  std::function<void(const std::string&)> on_warning;
};

// Counters of one level since the last TakeStats (occupancy and peak: now / since the start).
struct CacheTierStats {
  std::string name;              // "memory", "directory <path>", "source"
  uint64_t capacity_bytes = 0;   // 0 for the source
  uint64_t hits = 0;             // opens served by this level
  uint64_t misses = 0;           // opens that found nothing here and went to a slower level
  uint64_t read_through = 0;     // misses served by a copy into this level made (or finished)
                                 // during the open: lru's and clairvoyant's reads of a miss
  uint64_t bytes_served = 0;     // bytes read by the reader from this level
  uint64_t bytes_copied = 0;     // bytes copied into this level (background and on-read copies)
  uint64_t files_copied = 0;     // copies completed into this level
  uint64_t evictions = 0;        // files removed to make room
  uint64_t invalidations = 0;    // copies dropped because the source changed (size or mtime)
  uint64_t skipped_too_big = 0;  // placements refused: the file is larger than the capacity
  uint64_t failed_copies = 0;    // copies into this level that failed (a full file system, a
                                 // source read error); such a file is not placed here again
  uint64_t occupancy_bytes = 0;  // bytes held now, copies in progress included
  uint64_t occupancy_files = 0;  // complete files held now
  uint64_t peak_bytes = 0;       // most bytes ever held at once (never above capacity_bytes)
};

struct CacheStats {
  std::vector<CacheTierStats> tiers;  // one per tier, fastest first
  CacheTierStats source;              // hits = opens served by the source
};

// A file descriptor closed by its destructor (move-only).
class OwnedFd {
 public:
  explicit OwnedFd(int fd = -1) : fd_(fd) {}
  ~OwnedFd() { reset(); }
  OwnedFd(OwnedFd&& other) noexcept : fd_(other.release()) {}
  OwnedFd& operator=(OwnedFd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  OwnedFd(const OwnedFd&) = delete;
  OwnedFd& operator=(const OwnedFd&) = delete;
  int get() const { return fd_; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset(int fd = -1);  // closes the descriptor held (if any), then holds `fd`

 private:
  int fd_;
};

// What TieredCache::OpenForHandoff gives: a descriptor of a complete copy, for another process.
struct CacheHandoff {
  OwnedFd fd;                 // read-only, close-on-exec, own offset; invalid when tier is -1
  int tier = -1;              // the tier holding the copy; -1: read the source yourself
  uint64_t size = 0;          // the file's bytes
  int64_t mtime_ns = 0;       // the source's mtime the copy was made from (0 when unknown)
  bool read_through = false;  // the copy was made (or finished) during this open
  // The source file the copy was made from (stat's st_dev and st_ino; 0 when the source has no
  // host files): a server checks it is the file the client's path resolved to.
  uint64_t source_dev = 0;
  uint64_t source_ino = 0;
};

// The cache. Safe for concurrent use: Open and the reads of the files it returns from many
// threads; background copy threads (CacheTierOptions::threads per tier) are joined by the
// destructor. Files it returns must be destroyed before it; the source storage must outlive it.
// A directory tier is owned by one cache at a time (a lock file in dlio's folder in it): creation
// removes the copies and the temporaries a dead cache left in dlio's folder, never any other
// file, and trusts none of them; destruction removes its copies (and dlio's folder when empty).
// Copies are readable by no more users than their source (its permission bits, at most 0644, in a
// 0700 folder).
class TieredCache {
 public:
  static Result<std::unique_ptr<TieredCache>> Make(CacheOptions options, Storage* source);
  virtual ~TieredCache() = default;

  // Opens `path` for reading from the fastest level holding a complete, current copy (a copy is
  // current when the source's size and mtime are those it was copied with; a stale one is
  // dropped), and places it as the policy says. Errors name the path. For a Storage's DoOpen:
  // the File reports its calls to the Storage that returns it (read through NewTieredStorage).
  virtual Result<std::unique_ptr<File>> Open(const std::string& path,
                                             const FileOptions& options = {}) = 0;
  // As Open for the policy (hit and miss counting, placement, read-through, waits), but for a
  // reader in another process (a cache server's client): a new descriptor of the complete copy
  // that serves the open, or tier -1 when the source serves it (the caller reads the source
  // itself). The descriptor keeps reading the copy after it is evicted. The client's reads count
  // nowhere until CreditRead. Errors name the path.
  virtual Result<CacheHandoff> OpenForHandoff(const std::string& path) = 0;
  // Adds `bytes` a client read to the bytes_served of `tier` (-1: the source); saturates at
  // UINT64_MAX instead of wrapping.
  virtual void CreditRead(int tier, uint64_t bytes) = 0;
  // Drops any copy of `path` (the source was written, renamed or removed through the storage).
  virtual void Invalidate(const std::string& path) = 0;
  // clairvoyant: the paths the run will open from now on, in order (repeats for later epochs);
  // each Open of the next ones advances a cursor. Replaces the previous sequence. Others ignore it.
  virtual void SetFutureAccesses(std::vector<std::string> paths) = 0;
  // Waits until no copy is queued or in progress (tests, and the end of an epoch's accounting).
  virtual void WaitIdle() = 0;
  virtual CacheStats Stats() const = 0;
  // Stats(), then resets the counters (not occupancy and peak): per-epoch statistics.
  virtual CacheStats TakeStats() = 0;
  virtual CachePolicyKind policy() const = 0;
  // Whether the policy uses SetFutureAccesses (clairvoyant).
  virtual bool uses_future_accesses() const = 0;
};

// What dlio writes in a directory tier's folder: only the folder kCacheDirName (0700), made by
// dlio with the file kCacheMarkerName in it (a folder of that name without it is never used nor
// touched), and in it the lock file kCacheLockName, complete copies ("<hash>-<n>-<name>" +
// kCacheCopySuffix) and copies in progress ("<copy name>" + kCacheTmpInfix + "<owner token>").
inline constexpr char kCacheDirName[] = ".dlio-cache";
inline constexpr char kCacheMarkerName[] = "DLIO-CACHE-FOLDER";
inline constexpr char kCacheLockName[] = "lock";
inline constexpr char kCacheCopySuffix[] = ".dlio-cached";
inline constexpr char kCacheTmpInfix[] = ".dlio-cache-tmp-";

// The `tiered` storage: a Storage over `source` whose reads go through a TieredCache; writes and
// path operations pass through to the source (and drop the copies of the paths they change).
// Capabilities: the source's, without mapping files or shared writes (both would bypass the
// cache).
Result<std::unique_ptr<Storage>> NewTieredStorage(std::unique_ptr<Storage> source,
                                                  CacheOptions options);
// The `tiered` storage of a process whose node's cache another process serves (a CacheServer at
// `socket_path`, dlio/cache_server.h; storage.cache_scope node): its opens ask the server, which
// counts them for the policy and hands over a descriptor of the complete copy; reads of files the
// server leaves to the source (tier -1) go to `source`. Reads are reported to the server as files
// close. CacheOf gives the client's view: Stats are the server's when `reports_stats` (one client
// a node), else empty. Errors name the socket.
Result<std::unique_ptr<Storage>> NewTieredClientStorage(std::unique_ptr<Storage> source,
                                                        const std::string& socket_path,
                                                        const std::string& client_name,
                                                        bool reports_stats);
// The options of the storage a `tiered` storage of `options` caches (storage.tiered_source):
// InvalidArgument naming the key when it is empty or tiered.
Result<StorageOptions> TieredSourceOptions(const StorageOptions& options);

// The cache of a storage NewTieredStorage made, looking through StorageWrappers around it
// (nullptr when there is none).
TieredCache* CacheOf(Storage* storage);

// Registers "tiered" (its TieredOptions in StorageOptions::backends, dlio/cache_options.h); called
// by RegisterBuiltins.
Status RegisterTieredStorage(StorageRegistry* storages, NodeSharedStorageRegistry* node_shared);

}  // namespace dlio
