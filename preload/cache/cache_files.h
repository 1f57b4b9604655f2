// The descriptors libdlio_cache_preload.so answered for: which source file each names, which level
// serves it (a tier's copy, or the source with its emulated cost) and how many bytes were read.
// Descriptors of other files have no entry: their reads cost one relaxed atomic load.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace dlio::cache_preload {

// One open of a source file, shared (reference-counted) by its dups.
struct CachedFile {
  std::atomic<int32_t> refs;
  int32_t tier;  // the tier whose copy the descriptor reads; -1: the source
  bool costed;   // reads pay the source's latency and bandwidth (the source of a `slow` server)
  std::atomic<uint64_t> bytes;  // read through any descriptor of this open (and mappings)
  std::atomic<uint64_t> calls;  // stdio: latencies charged (one per buffer refill)
  uint32_t len;
  char path[1];  // len + 1 bytes, NUL-terminated
};

// nullptr when out of memory.
CachedFile* NewCachedFile(const char* path, size_t len, int tier, bool costed);
// Drops a reference; the last one tells the server the bytes read (kReadReport) and frees it.
void ReleaseCachedFile(CachedFile* file);

// fd -> CachedFile for fds below kMaxFds (larger ones pass through). Safe for concurrent use; a
// process-wide singleton because descriptors are.
class FileTable {
 public:
  static constexpr int kMaxFds = 1 << 16;
  static FileTable& Get();

  bool Tracked(int fd) const {
    return fd >= 0 && fd < kMaxFds && entries_[fd].load(std::memory_order_relaxed) != nullptr;
  }
  // A new reference (release with ReleaseCachedFile), or nullptr.
  CachedFile* Acquire(int fd);
  // fd now names `file` (the table takes over one reference; nullptr clears). The entry it
  // replaces is released (a dup2 onto a cached descriptor closes it).
  void Set(int fd, CachedFile* file);
  // new_fd names what old_fd names (nothing tracked: new_fd's entry is cleared).
  void Dup(int old_fd, int new_fd);

  // Held across fork so the child never inherits a locked table.
  void LockForFork() { Lock(); }
  void UnlockAfterFork() { Unlock(); }

 private:
  void Lock();
  void Unlock() { lock_.clear(std::memory_order_release); }

  std::atomic_flag lock_ = ATOMIC_FLAG_INIT;
  std::atomic<CachedFile*> entries_[kMaxFds] = {};
};

// Adds `bytes` read in `calls` calls to fd's count and, when it reads the costed source, sleeps
// for the source's cost (latency per call plus bytes over bandwidth). Nothing for other fds.
void CountRead(int fd, int64_t bytes, uint64_t calls = 1);
// The same for a file already acquired.
void CountRead(CachedFile* file, int64_t bytes, uint64_t calls);

}  // namespace dlio::cache_preload
