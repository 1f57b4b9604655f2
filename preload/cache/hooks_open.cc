// Opens, closes and descriptor copies. A read-only open of a regular file under
// DLIO_CACHE_DATA_DIRS asks the server: a tier's copy is reopened as the program's descriptor
// (through /proc/self/fd: a file position of its own and the program's flags), else the source is
// opened as the program asked. Writing opens of such files tell the server to drop their copies
// and pass through; everything else passes through untouched.
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cache_client.h"
#include "cache_files.h"
#include "common/fd_hooks.h"
#include "common/path_filter.h"
#include "common/private_fd.h"

extern "C" {
int __open_2(const char*, int);
int __open64_2(const char*, int);
int __openat_2(int, const char*, int);
int __openat64_2(int, const char*, int);
}

namespace dlio::cache_preload {
namespace {

bool ReadOnly(int flags) {
  return (flags & O_ACCMODE) == O_RDONLY && (flags & (O_CREAT | O_TRUNC | O_PATH)) == 0 &&
         (flags & O_TMPFILE) != O_TMPFILE;
}

bool Writes(int flags) { return (flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC) != 0; }

// Whether the open would give a regular file: a symbolic link under O_NOFOLLOW (ELOOP) or any
// file under O_DIRECTORY (ENOTDIR) is left to the program's own call, which fails as it should.
bool RegularFile(const char* path, int flags) {
  if ((flags & O_DIRECTORY) != 0) return false;
  struct stat st;
  const int at = (flags & O_NOFOLLOW) != 0 ? AT_SYMLINK_NOFOLLOW : 0;
  return syscall(SYS_newfstatat, AT_FDCWD, path, &st, at) == 0 && S_ISREG(st.st_mode);
}

// A descriptor of the copy `copy_fd` with its own file position and the flags of the program's
// open that apply to a read-only regular file (not O_DIRECT, which a memory copy refuses, nor
// O_NOFOLLOW, which /proc/self/fd's links would fail). It takes copy_fd's number: the lowest that
// was free, the one a plain open would have returned.
int Reopen(int copy_fd, int flags) {
  char link[40];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", copy_fd);
  const int fd = static_cast<int>(syscall(
      SYS_openat, AT_FDCWD, link, O_RDONLY | (flags & (O_CLOEXEC | O_NONBLOCK | O_NOCTTY))));
  if (fd < 0 || syscall(SYS_dup3, fd, copy_fd, flags & O_CLOEXEC) < 0) {
    if (fd >= 0) syscall(SYS_close, fd);
    syscall(SYS_close, copy_fd);
    return -1;
  }
  syscall(SYS_close, fd);
  return copy_fd;
}

// The program's open of `path` under the cache's rules. `*handled` false: not a file for the
// cache (the caller makes the program's own call); else the descriptor (or -1 and errno).
int OpenCached(int dirfd, const char* path, int flags, bool* handled) {
  *handled = false;
  if (InHook() || !Enabled() || path == nullptr) return -1;
  HookScope scope;
  char abs[4096];
  const size_t len = preload::AbsolutePath(dirfd, path, abs, sizeof abs);
  if (len == 0 || !UnderDataDirs(abs, len)) return -1;
  if (!ReadOnly(flags)) {
    if (Writes(flags)) Invalidate(abs, len);
    return -1;
  }
  if (!RegularFile(abs, flags)) return -1;
  *handled = true;
  Opened opened;
  const bool asked = OpenThroughServer(abs, len, &opened);
  int fd = -1;
  if (opened.tier >= 0) fd = Reopen(opened.fd, flags);
  if (fd < 0) {  // the source, as the program named it (not the lexically normalized path)
    opened.tier = -1;
    fd = static_cast<int>(syscall(SYS_openat, dirfd, path, flags, 0));
  }
  if (fd < 0) return -1;
  // Without a server nothing is reported; the source's cost applies when a server gave one.
  const bool costed = opened.tier < 0 && Cost().Any();
  if (asked || costed) FileTable::Get().Set(fd, NewCachedFile(abs, len, opened.tier, costed));
  return fd;
}

template <typename Call>
int Open(int dirfd, const char* path, int flags, Call call) {
  bool handled = false;
  const int fd = OpenCached(dirfd, path, flags, &handled);
  if (handled) return fd;
  const int r = call();
  if (r >= 0 && FileTable::Get().Has(r)) FileTable::Get().Set(r, nullptr);
  return r;
}

// fopen's mode as open flags: read-only modes ("r", "rb", "re", ...) only; -1 otherwise.
int ReadOnlyMode(const char* mode) {
  if (mode == nullptr || mode[0] != 'r' || std::strchr(mode, '+') != nullptr) return -1;
  return O_RDONLY | (std::strchr(mode, 'e') != nullptr ? O_CLOEXEC : 0);
}

template <typename Call>
FILE* Fopen(const char* path, const char* mode, Call call) {
  const int flags = ReadOnlyMode(mode);
  bool handled = false;
  const int fd = OpenCached(AT_FDCWD, path, flags < 0 ? O_WRONLY : flags, &handled);
  if (!handled) return call();
  if (fd < 0) return nullptr;
  FILE* f = fdopen(fd, mode);
  if (f == nullptr) {
    const int err = errno;
    FileTable::Get().Set(fd, nullptr);
    syscall(SYS_close, fd);
    errno = err;
  }
  return f;
}

}  // namespace
}  // namespace dlio::cache_preload

// What fd_hooks.cc needs of the cache client: its table follows dups (a dup shares the open's
// count) and forgets numbers given a new meaning (the open's report goes with the last one).
namespace dlio::preload::fd_hooks {

void Forget(int fd) {
  if (cache_preload::FileTable::Get().Has(fd)) cache_preload::FileTable::Get().Set(fd, nullptr);
}

void Copy(int old_fd, int new_fd) {
  cache_preload::FileTable& table = cache_preload::FileTable::Get();
  if (table.Has(old_fd) || table.Has(new_fd)) table.Dup(old_fd, new_fd);
}

void FlagsChanged(int) {}

}  // namespace dlio::preload::fd_hooks

namespace cp = dlio::cache_preload;
using cp::FileTable;

#define DLIO_CACHE_OPEN_MODE(flags)                                 \
  mode_t mode = 0;                                                  \
  if ((flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE) { \
    va_list ap;                                                     \
    va_start(ap, flags);                                            \
    mode = static_cast<mode_t>(va_arg(ap, unsigned));               \
    va_end(ap);                                                     \
  }

DLIO_CACHE_EXPORT int open(const char* path, int flags, ...) {
  DLIO_CACHE_OPEN_MODE(flags);
  return cp::Open(AT_FDCWD, path, flags, [&] { return DLIO_REAL(open)(path, flags, mode); });
}

DLIO_CACHE_EXPORT int open64(const char* path, int flags, ...) {
  DLIO_CACHE_OPEN_MODE(flags);
  return cp::Open(AT_FDCWD, path, flags, [&] { return DLIO_REAL(open64)(path, flags, mode); });
}

DLIO_CACHE_EXPORT int openat(int dirfd, const char* path, int flags, ...) {
  DLIO_CACHE_OPEN_MODE(flags);
  return cp::Open(dirfd, path, flags, [&] { return DLIO_REAL(openat)(dirfd, path, flags, mode); });
}

DLIO_CACHE_EXPORT int openat64(int dirfd, const char* path, int flags, ...) {
  DLIO_CACHE_OPEN_MODE(flags);
  return cp::Open(dirfd, path, flags,
                  [&] { return DLIO_REAL(openat64)(dirfd, path, flags, mode); });
}

DLIO_CACHE_EXPORT int __open_2(const char* path, int flags) {
  return cp::Open(AT_FDCWD, path, flags, [&] { return DLIO_REAL(__open_2)(path, flags); });
}

DLIO_CACHE_EXPORT int __open64_2(const char* path, int flags) {
  return cp::Open(AT_FDCWD, path, flags, [&] { return DLIO_REAL(__open64_2)(path, flags); });
}

DLIO_CACHE_EXPORT int __openat_2(int dirfd, const char* path, int flags) {
  return cp::Open(dirfd, path, flags, [&] { return DLIO_REAL(__openat_2)(dirfd, path, flags); });
}

DLIO_CACHE_EXPORT int __openat64_2(int dirfd, const char* path, int flags) {
  return cp::Open(dirfd, path, flags, [&] { return DLIO_REAL(__openat64_2)(dirfd, path, flags); });
}

DLIO_CACHE_EXPORT FILE* fopen(const char* path, const char* mode) {
  return cp::Fopen(path, mode, [&] { return DLIO_REAL(fopen)(path, mode); });
}

DLIO_CACHE_EXPORT FILE* fopen64(const char* path, const char* mode) {
  return cp::Fopen(path, mode, [&] { return DLIO_REAL(fopen64)(path, mode); });
}

// The entry goes (and its read report) before the descriptor: a concurrent open may reuse the
// number at once. The connection is not the program's: closing it fails as without the cache.
DLIO_CACHE_EXPORT int close(int fd) {
  if (dlio::preload::PrivateFd::Get().Is(fd)) {
    errno = EBADF;
    return -1;
  }
  if (!cp::InHook() && FileTable::Get().Has(fd)) FileTable::Get().Set(fd, nullptr);
  return DLIO_REAL(close)(fd);
}

// glibc's fclose closes its descriptor internally, past the close hook.
DLIO_CACHE_EXPORT int fclose(FILE* f) {
  if (f != nullptr && !cp::InHook()) {
    const int fd = fileno(f);
    if (FileTable::Get().Has(fd)) FileTable::Get().Set(fd, nullptr);
  }
  return DLIO_REAL(fclose)(f);
}
