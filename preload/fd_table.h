// Which file every traced descriptor names. Descriptors of files outside the path filter have no
// entry, so the hot path of an untraced descriptor is one relaxed atomic load.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace dlio::preload {

// An open file's absolute path, shared (reference-counted) by descriptors made with dup, and
// its file position while only this process can move it.
struct FileRef {
  // The open file description's position as the hooks moved it, or kUnknownPosition: ask the
  // kernel. Known from an open without O_APPEND; unknown for good once another process may
  // share the description (fork, posix_spawn), the program changed its flags, or a call the
  // hooks do not follow moved it (sendfile, copy_file_range, splice, stdio's own reads).
  static constexpr int64_t kUnknownPosition = -1;
  std::atomic<int64_t> position;
  std::atomic<int32_t> refs;
  uint32_t len;
  bool plain;    // no byte needs JSON escaping: the writer copies the path as it is
  char path[1];  // len + 1 bytes, NUL-terminated
};

// Moves a known position by `delta` (when `absolute` < 0) or to `absolute`; returns the
// position before the move, or kUnknownPosition (then nothing changes).
int64_t MovePosition(FileRef* ref, int64_t delta, int64_t absolute = -1);

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
  // fd's position can no longer be followed (fd untraced: nothing).
  void ForgetPosition(int fd);
  // No position can be followed any more: every description may now be shared with another
  // process. Called with the table locked for fork (`locked`) or not.
  void ForgetAllPositions(bool locked);

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
