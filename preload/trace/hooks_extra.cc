// Calls that complete the picture: preadv2/pwritev2 (recorded), the variadic execl family
// (glibc's execl calls execve internally, past the execve hook), and calls that
// move a file position the hooks do not record (sendfile, copy_file_range, splice) or share
// descriptions with a new process without fork (posix_spawn, system, popen): after those the
// position of the files involved comes from the kernel again. And shm_open, whose creations are
// counted on the thread's next event (a DataLoader worker's collate of a batch).
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/syscall.h>
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

// execl's arguments up to its terminating nullptr, as many as there are (the kernel's ARG_MAX
// is the limit, as without the tracer), and (execle) the environment after them. The array is on
// the stack when small, else in an anonymous mapping: execle is async-signal-safe, malloc is not.
class ExecArgs {
 public:
  ExecArgs(const char* arg0, va_list ap, bool with_env) {
    size_t n = 1;
    if (arg0 != nullptr) {
      va_list count;
      va_copy(count, ap);
      while (va_arg(count, char*) != nullptr) ++n;
      va_end(count);
    }
    if (n + 1 > kOnStack) {
      mapped_ = (n + 1) * sizeof(char*);
      // Raw: the mmap hook would take the mappings' lock, which a signal may have interrupted.
      void* p = reinterpret_cast<void*>(syscall(SYS_mmap, nullptr, mapped_, PROT_READ | PROT_WRITE,
                                                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
      if (p == MAP_FAILED) {
        mapped_ = 0;
        return;
      }
      argv_ = static_cast<char**>(p);
    }
    argv_[0] = const_cast<char*>(arg0);
    for (size_t i = 1; i < n; ++i) argv_[i] = va_arg(ap, char*);
    if (arg0 != nullptr) va_arg(ap, char*);  // the terminating nullptr
    argv_[n] = nullptr;
    if (with_env) envp_ = va_arg(ap, char* const*);
    ok_ = true;
  }
  ~ExecArgs() {
    if (mapped_ > 0) syscall(SYS_munmap, argv_, mapped_);
  }
  ExecArgs(const ExecArgs&) = delete;
  ExecArgs& operator=(const ExecArgs&) = delete;

  // exec's work: the trace written out first; execvp's search of PATH when `search`.
  int Exec(const char* path, bool search) {
    if (!ok_) {
      errno = ENOMEM;
      return -1;
    }
    FinishTrace(/*final=*/false);
    if (search) return DLIO_REAL(execvp)(path, argv_);
    return DLIO_REAL(execve)(path, argv_, envp_ != nullptr ? envp_ : environ);
  }

 private:
  static constexpr size_t kOnStack = 256;
  char* on_stack_[kOnStack];
  char** argv_ = on_stack_;
  size_t mapped_ = 0;
  char* const* envp_ = nullptr;
  bool ok_ = false;
};

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

// The execl family: the arguments become an array and go to the exec hooks' work (the trace is
// written out first).
DLIO_PRELOAD_EXPORT int execl(const char* path, const char* arg, ...) {
  va_list ap;
  va_start(ap, arg);
  dlio::preload::ExecArgs a(arg, ap, /*with_env=*/false);
  va_end(ap);
  return a.Exec(path, /*search=*/false);
}

DLIO_PRELOAD_EXPORT int execlp(const char* file, const char* arg, ...) {
  va_list ap;
  va_start(ap, arg);
  dlio::preload::ExecArgs a(arg, ap, /*with_env=*/false);
  va_end(ap);
  return a.Exec(file, /*search=*/true);
}

DLIO_PRELOAD_EXPORT int execle(const char* path, const char* arg, ...) {
  va_list ap;
  va_start(ap, arg);
  dlio::preload::ExecArgs a(arg, ap, /*with_env=*/true);
  va_end(ap);
  return a.Exec(path, /*search=*/false);
}

// A shared-memory object is no file the trace names; its creation is counted on the calling
// thread's next event (pfw::kSharedCreated): a PyTorch DataLoader worker collates each batch
// into a new one, which tells `fit` where the worker's batches end.
DLIO_PRELOAD_EXPORT int shm_open(const char* name, int oflag, mode_t mode) {
  const int fd = DLIO_REAL(shm_open)(name, oflag, mode);
  if (fd >= 0 && (oflag & O_CREAT) != 0 && dlio::preload::Tracing()) {
    dlio::preload::NoteSharedMemoryCreated();
  }
  return fd;
}
