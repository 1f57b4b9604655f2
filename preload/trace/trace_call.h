// The shapes of a traced call, shared by the hook files: each times the real call, records one
// event and restores errno. Every template passes straight through when tracing is off, the
// calling thread is inside a hook already, or the file is not traced.
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>

#include "common/fd_table.h"
#include "event_writer.h"
#include "runtime.h"
#include "trace/pfw_codec.h"

namespace dlio::preload {

inline bool Tracing() { return Active() && !InHook(); }

inline int64_t ErrOr(int64_t r, int err) { return r < 0 ? -err : r; }

// Records one complete event; `offset`/`count`/`faults` -1 when they do not apply.
void RecordCall(const char* name, const char* cat, int64_t t0, int64_t t1, const FileRef* file,
                int64_t offset, int64_t count, int64_t ret, int64_t faults = -1);

// The minor page faults the calling thread has taken so far; -1 when the kernel does not say.
int64_t ThreadMinorFaults();

// The calling thread's minor page faults across a data call of `bytes` bytes (pfw::kFaults),
// counted from pfw::kFaultsMinBytes unless DLIO_PRELOAD_NO_FAULTS is set: made before the call's
// timer starts, Taken() after it stops, so the recorded duration stays the call's own. -1 when
// not counted.
class FaultWindow {
 public:
  explicit FaultWindow(size_t bytes)
      : start_(bytes >= static_cast<size_t>(pfw::kFaultsMinBytes) && CountingFaults()
                   ? ThreadMinorFaults()
                   : -1) {}
  int64_t Taken() const {
    if (start_ < 0) return -1;
    const int64_t now = ThreadMinorFaults();
    return now >= start_ ? now - start_ : -1;
  }

 private:
  int64_t start_;
};

// Records the pages touched of every traced mapping still open ("mmap.touched"), at the end of
// the trace: a program rarely unmaps everything before it exits.
void RecordOpenMappings();

// A new reference to `path` (relative to dirfd) when it passes the filter, else nullptr.
FileRef* FilteredFile(int dirfd, const char* path);

// Opens through `call` (which returns an fd or -1) and makes the fd name its file when the path
// passes the filter. `flags`: the open's, to follow the position from 0 when it has no O_APPEND;
// -1 when the hooks will not see the calls that move it (a stdio stream).
template <typename Call>
int TraceOpen(const char* name, const char* cat, int dirfd, const char* path, int flags,
              Call call) {
  if (InHook()) return call();
  if (!Active()) {
    const int fd = call();
    if (fd >= 0) FdTable::Get().Set(fd, nullptr);
    return fd;
  }
  HookScope scope;
  FileRef* file = FilteredFile(dirfd, path);
  const int64_t t0 = NowMicros();
  const int fd = call();
  const int err = errno;
  const int64_t t1 = NowMicros();
  if (file != nullptr) RecordCall(name, cat, t0, t1, file, -1, -1, ErrOr(fd, err));
  if (file != nullptr && fd >= 0 && flags != -1 && (flags & O_APPEND) == 0) {
    file->position.store(0, std::memory_order_relaxed);
  }
  if (fd >= 0) {
    FdTable::Get().Set(fd, file);
  } else {
    ReleaseFileRef(file);
  }
  errno = err;
  return fd;
}

// A data call on fd moving up to `count` bytes; `offset` < 0 means "the file position": the one
// the hooks followed (FileRef::position, moved by the bytes transferred), or when that is unknown
// the kernel's after the call (lseek(fd, 0, SEEK_CUR)) minus the bytes moved.
template <typename Call>
ssize_t TraceData(const char* name, int fd, size_t count, int64_t offset, Call call) {
  if (!FdTable::Get().Traced(fd)) return call();
  if (!Tracing()) {
    const ssize_t r = call();
    if (offset < 0 && r > 0) {
      const int err = errno;
      FdTable::Get().ForgetPosition(fd);  // moved where no hook records it
      errno = err;
    }
    return r;
  }
  HookScope scope;
  FileRef* file = FdTable::Get().Acquire(fd);
  const FaultWindow faults(count);
  const int64_t t0 = NowMicros();
  const ssize_t r = call();
  const int err = errno;
  const int64_t t1 = NowMicros();
  const int64_t faulted = faults.Taken();
  if (offset < 0) {
    offset = file == nullptr ? -1 : MovePosition(file, r > 0 ? r : 0);
    if (offset < 0) {
      const off_t pos = DLIO_REAL(lseek)(fd, 0, SEEK_CUR);
      offset = pos < 0 ? -1 : static_cast<int64_t>(pos) - (r > 0 ? r : 0);
    }
  }
  RecordCall(name, "POSIX", t0, t1, file, offset, static_cast<int64_t>(count), ErrOr(r, err),
             faulted);
  ReleaseFileRef(file);
  errno = err;
  return r;
}

// lseek: recorded like TraceFdCall (`offset` the requested one, ret the new position), and the
// new position followed.
template <typename Call>
auto TraceLseek(const char* name, int fd, int64_t offset, Call call) -> decltype(call()) {
  if (!FdTable::Get().Traced(fd)) return call();
  if (!Tracing()) {
    const auto r = call();
    const int err = errno;
    FdTable::Get().ForgetPosition(fd);  // moved where no hook records it
    errno = err;
    return r;
  }
  HookScope scope;
  FileRef* file = FdTable::Get().Acquire(fd);
  const int64_t t0 = NowMicros();
  const auto r = call();
  const int err = errno;
  const int64_t t1 = NowMicros();
  if (file != nullptr && r >= 0) MovePosition(file, 0, static_cast<int64_t>(r));
  RecordCall(name, "POSIX", t0, t1, file, offset, -1, ErrOr(static_cast<int64_t>(r), err));
  ReleaseFileRef(file);
  errno = err;
  return r;
}

// A call on fd with no size (lseek, fsync, fstat, mmap): `offset`/`count` recorded when >= 0.
template <typename Call>
auto TraceFdCall(const char* name, const char* cat, int fd, int64_t offset, int64_t count,
                 Call call) -> decltype(call()) {
  if (!Tracing() || !FdTable::Get().Traced(fd)) return call();
  HookScope scope;
  FileRef* file = FdTable::Get().Acquire(fd);
  const int64_t t0 = NowMicros();
  const auto r = call();
  const int err = errno;
  const int64_t t1 = NowMicros();
  RecordCall(name, cat, t0, t1, file, offset, count, ErrOr(static_cast<int64_t>(r), err));
  ReleaseFileRef(file);
  errno = err;
  return r;
}

// A call on a path (the stat family), recorded when the path passes the filter.
template <typename Call>
int TracePathCall(const char* name, int dirfd, const char* path, Call call) {
  if (!Tracing()) return call();
  HookScope scope;
  FileRef* file = FilteredFile(dirfd, path);
  if (file == nullptr) return call();
  const int64_t t0 = NowMicros();
  const int r = call();
  const int err = errno;
  const int64_t t1 = NowMicros();
  RecordCall(name, "POSIX", t0, t1, file, -1, -1, ErrOr(r, err));
  ReleaseFileRef(file);
  errno = err;
  return r;
}

}  // namespace dlio::preload
