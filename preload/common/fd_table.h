// Which file every traced descriptor names. Descriptors of files outside the path filter have no
// entry, so the hot path of an untraced descriptor is one relaxed atomic load.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "ref_table.h"

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

// fd -> FileRef (RefTable), with the positions of the files it names. A process-wide singleton
// (FdTable::Get()) because descriptors are.
class FdTable : public RefTable<FileRef, ReleaseFileRef> {
 public:
  static FdTable& Get();

  // Whether fd names a traced file (cheap, no reference taken).
  bool Traced(int fd) const { return Has(fd); }
  // fd's position can no longer be followed (fd untraced: nothing).
  void ForgetPosition(int fd);
  // No position can be followed any more: every description may now be shared with another
  // process. Called with the table locked for fork (`locked`) or not.
  void ForgetAllPositions(bool locked);
};

}  // namespace dlio::preload
