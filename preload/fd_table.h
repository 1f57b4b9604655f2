// Which file every traced descriptor names. Descriptors of files outside the path filter have no
// entry, so the hot path of an untraced descriptor is one relaxed atomic load.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace dlio::preload {

// An open file's absolute path, shared (reference-counted) by descriptors made with dup.
struct FileRef {
  std::atomic<int32_t> refs;
  uint32_t len;
  char path[1];  // len + 1 bytes, NUL-terminated
};

// nullptr when out of memory.
FileRef* NewFileRef(const char* path, size_t len);
void ReleaseFileRef(FileRef* ref);

// fd -> FileRef for fds below kMaxFds (larger fds are not traced). Safe for concurrent use;
// a process-wide singleton (FdTable::Get()) because descriptors are.
class FdTable {
 public:
  static constexpr int kMaxFds = 1 << 16;
  static FdTable& Get();

  // Cheap test without taking a reference.
  bool Traced(int fd) const {
    return fd >= 0 && fd < kMaxFds && entries_[fd].load(std::memory_order_relaxed) != nullptr;
  }
  // A new reference to fd's file (release with ReleaseFileRef), or nullptr.
  FileRef* Acquire(int fd);
  // fd now names `ref` (ownership of one reference passes to the table; nullptr clears).
  void Set(int fd, FileRef* ref);
  // new_fd names what old_fd names (nothing when old_fd is untraced).
  void Dup(int old_fd, int new_fd);

  // Held across fork so the child never inherits a locked table.
  void LockForFork();
  void UnlockAfterFork();

 private:
  void Lock();
  void Unlock() { lock_.clear(std::memory_order_release); }

  std::atomic_flag lock_ = ATOMIC_FLAG_INIT;
  std::atomic<FileRef*> entries_[kMaxFds] = {};
};

}  // namespace dlio::preload
