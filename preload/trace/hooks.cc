// The interposed libc functions. Each one passes straight through unless the tracer is active,
// the calling thread is not already inside a hook, and the descriptor (or path) is traced.
//
// File offsets of read/write: the position the hooks followed since the open (moved by reads,
// writes and lseek through any dup of the descriptor), with no system call. Where this process
// alone cannot know it (O_APPEND, a description shared with another process after fork or
// posix_spawn, a position moved by sendfile & co.) it comes from the kernel: lseek(fd, 0,
// SEEK_CUR) after the call, minus the bytes moved, outside the timed interval.
#include <fcntl.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "common/fd_hooks.h"
#include "common/fd_table.h"
#include "common/private_fd.h"
#include "event_writer.h"
#include "runtime.h"
#include "trace_call.h"

namespace dlio::preload {
namespace {

bool NeedsMode(int flags) { return (flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE; }

int TraceClose(int fd) {
  // The tracer's own descriptor is not the program's: closing it fails as without the tracer.
  if (PrivateFd::Get().Is(fd)) {
    errno = EBADF;
    return -1;
  }
  auto real = DLIO_REAL(close);
  if (InHook() || !FdTable::Get().Traced(fd)) return real(fd);
  // The entry goes before the descriptor does: a concurrent open may reuse the number at once.
  FileRef* file = FdTable::Get().Acquire(fd);
  FdTable::Get().Set(fd, nullptr);
  if (!Active()) {
    ReleaseFileRef(file);
    return real(fd);
  }
  HookScope scope;
  const int64_t t0 = NowMicros();
  const int r = real(fd);
  const int err = errno;
  const int64_t t1 = NowMicros();
  RecordCall("close", "POSIX", t0, t1, file, -1, -1, ErrOr(r, err));
  ReleaseFileRef(file);
  FlushLocalBuffer();
  errno = err;
  return r;
}

[[noreturn]] void ExitNow(void (*real)(int), int status) {
  FinishTrace(/*final=*/true);
  real(status);  // never null: DLIO_REAL aborts on a symbol it cannot resolve
  syscall(SYS_exit_group, status);
  __builtin_unreachable();
}

}  // namespace

// What fd_hooks.cc needs of the tracer: its table follows dups and forgets replaced numbers.
namespace fd_hooks {

void Forget(int fd) {
  if (FdTable::Get().Traced(fd)) FdTable::Get().Set(fd, nullptr);
}

void Copy(int old_fd, int new_fd) {
  if (FdTable::Get().Traced(old_fd) || FdTable::Get().Traced(new_fd)) {
    FdTable::Get().Dup(old_fd, new_fd);
  }
}

// F_SETFL may set O_APPEND: the position is no longer followed.
void FlagsChanged(int fd) { FdTable::Get().ForgetPosition(fd); }

}  // namespace fd_hooks
}  // namespace dlio::preload

using dlio::preload::FdTable;
using dlio::preload::TraceClose;
using dlio::preload::TraceData;
using dlio::preload::TraceFdCall;
using dlio::preload::TraceLseek;
using dlio::preload::TraceOpen;

#define DLIO_OPEN_MODE(flags, last)                   \
  mode_t mode = 0;                                    \
  if (dlio::preload::NeedsMode(flags)) {              \
    va_list ap;                                       \
    va_start(ap, last);                               \
    mode = static_cast<mode_t>(va_arg(ap, unsigned)); \
    va_end(ap);                                       \
  }

DLIO_PRELOAD_EXPORT int open(const char* path, int flags, ...) {
  DLIO_OPEN_MODE(flags, flags);
  return TraceOpen("open", "POSIX", AT_FDCWD, path, flags,
                   [&] { return DLIO_REAL(open)(path, flags, mode); });
}

DLIO_PRELOAD_EXPORT int open64(const char* path, int flags, ...) {
  DLIO_OPEN_MODE(flags, flags);
  return TraceOpen("open64", "POSIX", AT_FDCWD, path, flags,
                   [&] { return DLIO_REAL(open64)(path, flags, mode); });
}

DLIO_PRELOAD_EXPORT int openat(int dirfd, const char* path, int flags, ...) {
  DLIO_OPEN_MODE(flags, flags);
  return TraceOpen("openat", "POSIX", dirfd, path, flags,
                   [&] { return DLIO_REAL(openat)(dirfd, path, flags, mode); });
}

DLIO_PRELOAD_EXPORT int openat64(int dirfd, const char* path, int flags, ...) {
  DLIO_OPEN_MODE(flags, flags);
  return TraceOpen("openat64", "POSIX", dirfd, path, flags,
                   [&] { return DLIO_REAL(openat64)(dirfd, path, flags, mode); });
}

DLIO_PRELOAD_EXPORT int __open_2(const char* path, int flags) {
  return TraceOpen("open", "POSIX", AT_FDCWD, path, flags,
                   [&] { return DLIO_REAL(__open_2)(path, flags); });
}

DLIO_PRELOAD_EXPORT int __open64_2(const char* path, int flags) {
  return TraceOpen("open64", "POSIX", AT_FDCWD, path, flags,
                   [&] { return DLIO_REAL(__open64_2)(path, flags); });
}

DLIO_PRELOAD_EXPORT int __openat_2(int dirfd, const char* path, int flags) {
  return TraceOpen("openat", "POSIX", dirfd, path, flags,
                   [&] { return DLIO_REAL(__openat_2)(dirfd, path, flags); });
}

DLIO_PRELOAD_EXPORT int __openat64_2(int dirfd, const char* path, int flags) {
  return TraceOpen("openat64", "POSIX", dirfd, path, flags,
                   [&] { return DLIO_REAL(__openat64_2)(dirfd, path, flags); });
}

DLIO_PRELOAD_EXPORT int creat(const char* path, mode_t mode) {
  return TraceOpen("creat", "POSIX", AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC,
                   [&] { return DLIO_REAL(creat)(path, mode); });
}

DLIO_PRELOAD_EXPORT int creat64(const char* path, mode_t mode) {
  return TraceOpen("creat64", "POSIX", AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC,
                   [&] { return DLIO_REAL(creat64)(path, mode); });
}

DLIO_PRELOAD_EXPORT int close(int fd) { return TraceClose(fd); }

DLIO_PRELOAD_EXPORT ssize_t read(int fd, void* buf, size_t n) {
  return TraceData("read", fd, n, -1, [&] { return DLIO_REAL(read)(fd, buf, n); });
}

DLIO_PRELOAD_EXPORT ssize_t __read_chk(int fd, void* buf, size_t n, size_t buflen) {
  return TraceData("read", fd, n, -1, [&] { return DLIO_REAL(__read_chk)(fd, buf, n, buflen); });
}

DLIO_PRELOAD_EXPORT ssize_t pread(int fd, void* buf, size_t n, off_t off) {
  return TraceData("pread", fd, n, off, [&] { return DLIO_REAL(pread)(fd, buf, n, off); });
}

DLIO_PRELOAD_EXPORT ssize_t pread64(int fd, void* buf, size_t n, off64_t off) {
  return TraceData("pread64", fd, n, off, [&] { return DLIO_REAL(pread64)(fd, buf, n, off); });
}

DLIO_PRELOAD_EXPORT ssize_t __pread_chk(int fd, void* buf, size_t n, off_t off, size_t buflen) {
  return TraceData("pread", fd, n, off,
                   [&] { return DLIO_REAL(__pread_chk)(fd, buf, n, off, buflen); });
}

DLIO_PRELOAD_EXPORT ssize_t __pread64_chk(int fd, void* buf, size_t n, off64_t off, size_t buflen) {
  return TraceData("pread64", fd, n, off,
                   [&] { return DLIO_REAL(__pread64_chk)(fd, buf, n, off, buflen); });
}

DLIO_PRELOAD_EXPORT ssize_t write(int fd, const void* buf, size_t n) {
  return TraceData("write", fd, n, -1, [&] { return DLIO_REAL(write)(fd, buf, n); });
}

DLIO_PRELOAD_EXPORT ssize_t pwrite(int fd, const void* buf, size_t n, off_t off) {
  return TraceData("pwrite", fd, n, off, [&] { return DLIO_REAL(pwrite)(fd, buf, n, off); });
}

DLIO_PRELOAD_EXPORT ssize_t pwrite64(int fd, const void* buf, size_t n, off64_t off) {
  return TraceData("pwrite64", fd, n, off, [&] { return DLIO_REAL(pwrite64)(fd, buf, n, off); });
}

DLIO_PRELOAD_EXPORT off_t lseek(int fd, off_t off, int whence) {
  return TraceLseek("lseek", fd, off, [&] { return DLIO_REAL(lseek)(fd, off, whence); });
}

DLIO_PRELOAD_EXPORT off64_t lseek64(int fd, off64_t off, int whence) {
  return TraceLseek("lseek64", fd, off, [&] { return DLIO_REAL(lseek64)(fd, off, whence); });
}

DLIO_PRELOAD_EXPORT int fsync(int fd) {
  return TraceFdCall("fsync", "POSIX", fd, -1, -1, [&] { return DLIO_REAL(fsync)(fd); });
}

DLIO_PRELOAD_EXPORT int fdatasync(int fd) {
  return TraceFdCall("fdatasync", "POSIX", fd, -1, -1, [&] { return DLIO_REAL(fdatasync)(fd); });
}

DLIO_PRELOAD_EXPORT void _exit(int status) { dlio::preload::ExitNow(DLIO_REAL(_exit), status); }

DLIO_PRELOAD_EXPORT void _Exit(int status) { dlio::preload::ExitNow(DLIO_REAL(_Exit), status); }

// A vfork child shares the parent's memory (its fd table, buffers and thread-local state) and
// runs hooks (close, execve, _exit) that would change the parent's trace: it becomes a fork,
// whose handlers give the child a state of its own. Programs only use vfork to exec soon after.
DLIO_PRELOAD_EXPORT pid_t vfork(void) { return fork(); }

// exec replaces the image: everything buffered goes to the file first. If exec fails, tracing
// goes on into a new file.
DLIO_PRELOAD_EXPORT int execve(const char* path, char* const argv[], char* const envp[]) {
  dlio::preload::FinishTrace(/*final=*/false);
  return DLIO_REAL(execve)(path, argv, envp);
}

DLIO_PRELOAD_EXPORT int execv(const char* path, char* const argv[]) {
  dlio::preload::FinishTrace(/*final=*/false);
  return DLIO_REAL(execv)(path, argv);
}

DLIO_PRELOAD_EXPORT int execvp(const char* file, char* const argv[]) {
  dlio::preload::FinishTrace(/*final=*/false);
  return DLIO_REAL(execvp)(file, argv);
}

DLIO_PRELOAD_EXPORT int execvpe(const char* file, char* const argv[], char* const envp[]) {
  dlio::preload::FinishTrace(/*final=*/false);
  return DLIO_REAL(execvpe)(file, argv, envp);
}
