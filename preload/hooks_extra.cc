// Calls that complete the picture: preadv2/pwritev2 (recorded), the variadic execl family
// (glibc's execl calls execve internally, past the execve hook), close_range, and calls that
// move a file position the hooks do not record (sendfile, copy_file_range, splice) or share
// descriptions with a new process without fork (posix_spawn, system, popen): after those the
// position of the files involved comes from the kernel again.
#include <fcntl.h>
#include <linux/close_range.h>
#include <spawn.h>
#include <stdarg.h>
#include <sys/sendfile.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>

#include "trace_call.h"

namespace dlio::preload {
namespace {

size_t IovTotal(const struct iovec* iov, int n) {
  size_t total = 0;
  for (int i = 0; i < n; ++i) total += iov[i].iov_len;
  return total;
}

void Forget(int fd) {
  if (!FdTable::Get().Traced(fd)) return;
  const int err = errno;
  FdTable::Get().ForgetPosition(fd);
  errno = err;
}

void ForgetAll() {
  const int err = errno;
  FdTable::Get().ForgetAllPositions(/*locked=*/false);
  errno = err;
}

// execl's arguments up to its terminating nullptr, and (execle) the environment after it.
constexpr int kMaxExecArgs = 4096;
struct ExecArgs {
  char* argv[kMaxExecArgs + 1];
  char* const* envp = nullptr;
  bool too_many = false;
};

void CollectExecArgs(const char* arg0, va_list ap, bool with_env, ExecArgs* out) {
  int n = 0;
  out->argv[n++] = const_cast<char*>(arg0);
  if (arg0 != nullptr) {
    for (char* a = va_arg(ap, char*);; a = va_arg(ap, char*)) {
      if (n == kMaxExecArgs) {
        out->too_many = true;
        break;
      }
      out->argv[n++] = a;
      if (a == nullptr) break;
    }
  }
  out->argv[n] = nullptr;
  if (with_env && !out->too_many) out->envp = va_arg(ap, char* const*);
}

}  // namespace
}  // namespace dlio::preload

using dlio::preload::FdTable;
using dlio::preload::TraceData;

DLIO_PRELOAD_EXPORT ssize_t preadv2(int fd, const struct iovec* iov, int n, off_t off, int flags) {
  return TraceData("preadv2", fd, dlio::preload::IovTotal(iov, n), off,
                   [&] { return DLIO_REAL(preadv2)(fd, iov, n, off, flags); });
}

DLIO_PRELOAD_EXPORT ssize_t preadv64v2(int fd, const struct iovec* iov, int n, off64_t off,
                                       int flags) {
  return TraceData("preadv64v2", fd, dlio::preload::IovTotal(iov, n), off,
                   [&] { return DLIO_REAL(preadv64v2)(fd, iov, n, off, flags); });
}

DLIO_PRELOAD_EXPORT ssize_t pwritev2(int fd, const struct iovec* iov, int n, off_t off, int flags) {
  return TraceData("pwritev2", fd, dlio::preload::IovTotal(iov, n), off,
                   [&] { return DLIO_REAL(pwritev2)(fd, iov, n, off, flags); });
}

DLIO_PRELOAD_EXPORT ssize_t pwritev64v2(int fd, const struct iovec* iov, int n, off64_t off,
                                        int flags) {
  return TraceData("pwritev64v2", fd, dlio::preload::IovTotal(iov, n), off,
                   [&] { return DLIO_REAL(pwritev64v2)(fd, iov, n, off, flags); });
}

DLIO_PRELOAD_EXPORT ssize_t sendfile(int out_fd, int in_fd, off_t* offset, size_t count) {
  const ssize_t r = DLIO_REAL(sendfile)(out_fd, in_fd, offset, count);
  dlio::preload::Forget(out_fd);
  if (offset == nullptr) dlio::preload::Forget(in_fd);
  return r;
}

DLIO_PRELOAD_EXPORT ssize_t sendfile64(int out_fd, int in_fd, off64_t* offset, size_t count) {
  const ssize_t r = DLIO_REAL(sendfile64)(out_fd, in_fd, offset, count);
  dlio::preload::Forget(out_fd);
  if (offset == nullptr) dlio::preload::Forget(in_fd);
  return r;
}

DLIO_PRELOAD_EXPORT ssize_t copy_file_range(int in_fd, off64_t* in_off, int out_fd,
                                            off64_t* out_off, size_t len, unsigned flags) {
  const ssize_t r = DLIO_REAL(copy_file_range)(in_fd, in_off, out_fd, out_off, len, flags);
  if (in_off == nullptr) dlio::preload::Forget(in_fd);
  if (out_off == nullptr) dlio::preload::Forget(out_fd);
  return r;
}

DLIO_PRELOAD_EXPORT ssize_t splice(int in_fd, off64_t* in_off, int out_fd, off64_t* out_off,
                                   size_t len, unsigned flags) {
  const ssize_t r = DLIO_REAL(splice)(in_fd, in_off, out_fd, out_off, len, flags);
  if (in_off == nullptr) dlio::preload::Forget(in_fd);
  if (out_off == nullptr) dlio::preload::Forget(out_fd);
  return r;
}

DLIO_PRELOAD_EXPORT int posix_spawn(pid_t* pid, const char* path,
                                    const posix_spawn_file_actions_t* actions,
                                    const posix_spawnattr_t* attr, char* const argv[],
                                    char* const envp[]) {
  dlio::preload::ForgetAll();
  return DLIO_REAL(posix_spawn)(pid, path, actions, attr, argv, envp);
}

DLIO_PRELOAD_EXPORT int posix_spawnp(pid_t* pid, const char* file,
                                     const posix_spawn_file_actions_t* actions,
                                     const posix_spawnattr_t* attr, char* const argv[],
                                     char* const envp[]) {
  dlio::preload::ForgetAll();
  return DLIO_REAL(posix_spawnp)(pid, file, actions, attr, argv, envp);
}

DLIO_PRELOAD_EXPORT int system(const char* command) {
  dlio::preload::ForgetAll();
  return DLIO_REAL(system)(command);
}

DLIO_PRELOAD_EXPORT FILE* popen(const char* command, const char* mode) {
  dlio::preload::ForgetAll();
  return DLIO_REAL(popen)(command, mode);
}

// Closed descriptors stop naming their files (nothing is recorded: no per-file close events).
DLIO_PRELOAD_EXPORT int close_range(unsigned first, unsigned last, int flags) {
  const int r = DLIO_REAL(close_range)(first, last, flags);
  if (r == 0 && (flags & CLOSE_RANGE_CLOEXEC) == 0) {
    const int err = errno;
    for (unsigned fd = first; fd <= last && fd < FdTable::kMaxFds; ++fd) {
      if (FdTable::Get().Traced(static_cast<int>(fd)))
        FdTable::Get().Set(static_cast<int>(fd), nullptr);
    }
    errno = err;
  }
  return r;
}

// The execl family: the arguments become an array and go to the exec hooks' work (the trace is
// written out first).
DLIO_PRELOAD_EXPORT int execl(const char* path, const char* arg, ...) {
  dlio::preload::ExecArgs a;
  va_list ap;
  va_start(ap, arg);
  dlio::preload::CollectExecArgs(arg, ap, /*with_env=*/false, &a);
  va_end(ap);
  if (a.too_many) return errno = E2BIG, -1;
  dlio::preload::FinishTrace(/*final=*/false);
  return DLIO_REAL(execve)(path, a.argv, environ);
}

DLIO_PRELOAD_EXPORT int execlp(const char* file, const char* arg, ...) {
  dlio::preload::ExecArgs a;
  va_list ap;
  va_start(ap, arg);
  dlio::preload::CollectExecArgs(arg, ap, /*with_env=*/false, &a);
  va_end(ap);
  if (a.too_many) return errno = E2BIG, -1;
  dlio::preload::FinishTrace(/*final=*/false);
  return DLIO_REAL(execvp)(file, a.argv);
}

DLIO_PRELOAD_EXPORT int execle(const char* path, const char* arg, ...) {
  dlio::preload::ExecArgs a;
  va_list ap;
  va_start(ap, arg);
  dlio::preload::CollectExecArgs(arg, ap, /*with_env=*/true, &a);
  va_end(ap);
  if (a.too_many) return errno = E2BIG, -1;
  dlio::preload::FinishTrace(/*final=*/false);
  return DLIO_REAL(execve)(path, a.argv, a.envp);
}
