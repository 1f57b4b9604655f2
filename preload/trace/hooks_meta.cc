// Vectored I/O, the stat family (also glibc's older __xstat entry points, which binaries built
// against glibc < 2.33, such as manylinux wheels, still call), unlink (fit leaves out the files
// a run creates and deletes: Python's tempfile probe) and mappings of traced files.
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include <atomic>

#include "trace/mapped_pages.h"
#include "trace_call.h"

extern "C" {
// Not declared by glibc >= 2.33 headers, still exported for old binaries.
int __xstat(int, const char*, struct stat*);
int __xstat64(int, const char*, struct stat64*);
int __lxstat(int, const char*, struct stat*);
int __lxstat64(int, const char*, struct stat64*);
int __fxstat(int, int, struct stat*);
int __fxstat64(int, int, struct stat64*);
int __fxstatat(int, int, const char*, struct stat*, int);
int __fxstatat64(int, int, const char*, struct stat64*, int);
}

namespace dlio::preload {
namespace {

size_t IovBytes(const struct iovec* iov, int n) {
  size_t total = 0;
  for (int i = 0; i < n; ++i) total += iov[i].iov_len;
  return total;
}

// Mappings of traced files, so munmap can name the file and report the pages the program
// touched. A small fixed table: mappings beyond it are still recorded at mmap, only their munmap
// and touched pages are not.
class Mappings {
 public:
  static constexpr int kMax = 4096;
  struct Region {
    void* addr;
    size_t len;
    int64_t offset;  // file offset of addr
    FileRef* file;
  };
  void Add(void* addr, size_t len, int64_t offset, FileRef* file) {
    Lock();
    for (Region& r : regions_) {
      if (r.file == nullptr) {
        r = {addr, len, offset, file};
        file = nullptr;
        break;
      }
    }
    Unlock();
    ReleaseFileRef(file);
  }
  // The mapping at exactly `addr` (removed from the table); its file is nullptr when unknown.
  Region Take(void* addr) {
    Region found{addr, 0, 0, nullptr};
    Lock();
    for (Region& r : regions_) {
      if (r.file != nullptr && r.addr == addr) {
        found = r;
        r.file = nullptr;
        break;
      }
    }
    Unlock();
    return found;
  }
  // Calls fn(region) for every mapping still in the table (at exit), holding the lock.
  template <typename Fn>
  void ForEach(Fn fn) {
    Lock();
    for (const Region& r : regions_) {
      if (r.file != nullptr) fn(r);
    }
    Unlock();
  }

 private:
  void Lock() {
    while (lock_.test_and_set(std::memory_order_acquire)) {
    }
  }
  void Unlock() { lock_.clear(std::memory_order_release); }
  std::atomic_flag lock_ = ATOMIC_FLAG_INIT;
  Region regions_[kMax] = {};
};

Mappings& Maps() {
  static Mappings maps;
  return maps;
}

// One "mmap.touched" event per run of the region's pages present in this process (see
// libdlio/src/trace/mapped_pages.h for what that includes): offset = file offset, count = bytes,
// clipped to the mapping's length, all stamped with the time of the scan.
void RecordTouched(const Mappings::Region& r) {
  const int64_t now = NowMicros();
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  mapped_pages::ForEachPresentRun(r.addr, r.len, [&](uint64_t first, uint64_t pages) {
    const uint64_t begin = first * page;
    uint64_t bytes = pages * page;
    if (bytes > r.len - begin) bytes = r.len - begin;
    RecordCall("mmap.touched", "POSIX", now, now, r.file, r.offset + static_cast<int64_t>(begin),
               static_cast<int64_t>(bytes), static_cast<int64_t>(bytes));
  });
}

template <typename Call>
void* TraceMmap(const char* name, size_t len, int fd, int64_t offset, Call call) {
  if (!Tracing() || !FdTable::Get().Traced(fd)) return call();
  HookScope scope;
  FileRef* file = FdTable::Get().Acquire(fd);
  const int64_t t0 = NowMicros();
  void* p = call();
  const int err = errno;
  const int64_t t1 = NowMicros();
  RecordCall(name, "POSIX", t0, t1, file, offset, static_cast<int64_t>(len),
             p == MAP_FAILED ? -err : 0);
  if (p != MAP_FAILED) {
    Maps().Add(p, len, offset, file);
  } else {
    ReleaseFileRef(file);
  }
  errno = err;
  return p;
}

int TraceMunmap(void* addr, size_t len) {
  auto real = DLIO_REAL(munmap);
  if (!Tracing()) return real(addr, len);
  const Mappings::Region region = Maps().Take(addr);
  if (region.file == nullptr) return real(addr, len);
  HookScope scope;
  RecordTouched(region);
  const int64_t t0 = NowMicros();
  const int r = real(addr, len);
  const int err = errno;
  const int64_t t1 = NowMicros();
  RecordCall("munmap", "POSIX", t0, t1, region.file, -1, static_cast<int64_t>(len), ErrOr(r, err));
  ReleaseFileRef(region.file);
  errno = err;
  return r;
}

}  // namespace

void RecordOpenMappings() {
  Maps().ForEach([](const Mappings::Region& r) { RecordTouched(r); });
}

}  // namespace dlio::preload

using dlio::preload::IovBytes;
using dlio::preload::TraceData;
using dlio::preload::TraceFdCall;
using dlio::preload::TracePathCall;

DLIO_PRELOAD_EXPORT ssize_t readv(int fd, const struct iovec* iov, int n) {
  return TraceData("readv", fd, IovBytes(iov, n), -1, [&] { return DLIO_REAL(readv)(fd, iov, n); });
}

DLIO_PRELOAD_EXPORT ssize_t writev(int fd, const struct iovec* iov, int n) {
  return TraceData("writev", fd, IovBytes(iov, n), -1,
                   [&] { return DLIO_REAL(writev)(fd, iov, n); });
}

DLIO_PRELOAD_EXPORT ssize_t preadv(int fd, const struct iovec* iov, int n, off_t off) {
  return TraceData("preadv", fd, IovBytes(iov, n), off,
                   [&] { return DLIO_REAL(preadv)(fd, iov, n, off); });
}

DLIO_PRELOAD_EXPORT ssize_t preadv64(int fd, const struct iovec* iov, int n, off64_t off) {
  return TraceData("preadv64", fd, IovBytes(iov, n), off,
                   [&] { return DLIO_REAL(preadv64)(fd, iov, n, off); });
}

DLIO_PRELOAD_EXPORT ssize_t pwritev(int fd, const struct iovec* iov, int n, off_t off) {
  return TraceData("pwritev", fd, IovBytes(iov, n), off,
                   [&] { return DLIO_REAL(pwritev)(fd, iov, n, off); });
}

DLIO_PRELOAD_EXPORT ssize_t pwritev64(int fd, const struct iovec* iov, int n, off64_t off) {
  return TraceData("pwritev64", fd, IovBytes(iov, n), off,
                   [&] { return DLIO_REAL(pwritev64)(fd, iov, n, off); });
}

DLIO_PRELOAD_EXPORT int stat(const char* path, struct stat* st) {
  return TracePathCall("stat", AT_FDCWD, path, [&] { return DLIO_REAL(stat)(path, st); });
}

DLIO_PRELOAD_EXPORT int stat64(const char* path, struct stat64* st) {
  return TracePathCall("stat64", AT_FDCWD, path, [&] { return DLIO_REAL(stat64)(path, st); });
}

DLIO_PRELOAD_EXPORT int lstat(const char* path, struct stat* st) {
  return TracePathCall("lstat", AT_FDCWD, path, [&] { return DLIO_REAL(lstat)(path, st); });
}

DLIO_PRELOAD_EXPORT int lstat64(const char* path, struct stat64* st) {
  return TracePathCall("lstat64", AT_FDCWD, path, [&] { return DLIO_REAL(lstat64)(path, st); });
}

DLIO_PRELOAD_EXPORT int fstat(int fd, struct stat* st) {
  return TraceFdCall("fstat", "POSIX", fd, -1, -1, [&] { return DLIO_REAL(fstat)(fd, st); });
}

DLIO_PRELOAD_EXPORT int fstat64(int fd, struct stat64* st) {
  return TraceFdCall("fstat64", "POSIX", fd, -1, -1, [&] { return DLIO_REAL(fstat64)(fd, st); });
}

// fstatat(fd, "", st, AT_EMPTY_PATH) is an fstat of fd. (A function, not a test in the hooks:
// glibc declares these paths nonnull, yet a program may pass NULL, which is not an empty path.)
static bool EmptyPath(const char* path) { return path != nullptr && path[0] == '\0'; }

DLIO_PRELOAD_EXPORT int fstatat(int dirfd, const char* path, struct stat* st, int flags) {
  auto call = [&] { return DLIO_REAL(fstatat)(dirfd, path, st, flags); };
  if (EmptyPath(path)) return TraceFdCall("fstatat", "POSIX", dirfd, -1, -1, call);
  return TracePathCall("fstatat", dirfd, path, call);
}

DLIO_PRELOAD_EXPORT int fstatat64(int dirfd, const char* path, struct stat64* st, int flags) {
  auto call = [&] { return DLIO_REAL(fstatat64)(dirfd, path, st, flags); };
  if (EmptyPath(path)) return TraceFdCall("fstatat64", "POSIX", dirfd, -1, -1, call);
  return TracePathCall("fstatat64", dirfd, path, call);
}

DLIO_PRELOAD_EXPORT int statx(int dirfd, const char* path, int flags, unsigned mask,
                              struct statx* st) {
  auto call = [&] { return DLIO_REAL(statx)(dirfd, path, flags, mask, st); };
  if (EmptyPath(path)) return TraceFdCall("statx", "POSIX", dirfd, -1, -1, call);
  return TracePathCall("statx", dirfd, path, call);
}

DLIO_PRELOAD_EXPORT int __xstat(int ver, const char* path, struct stat* st) {
  return TracePathCall("stat", AT_FDCWD, path, [&] { return DLIO_REAL(__xstat)(ver, path, st); });
}

DLIO_PRELOAD_EXPORT int __xstat64(int ver, const char* path, struct stat64* st) {
  return TracePathCall("stat64", AT_FDCWD, path,
                       [&] { return DLIO_REAL(__xstat64)(ver, path, st); });
}

DLIO_PRELOAD_EXPORT int __lxstat(int ver, const char* path, struct stat* st) {
  return TracePathCall("lstat", AT_FDCWD, path, [&] { return DLIO_REAL(__lxstat)(ver, path, st); });
}

DLIO_PRELOAD_EXPORT int __lxstat64(int ver, const char* path, struct stat64* st) {
  return TracePathCall("lstat64", AT_FDCWD, path,
                       [&] { return DLIO_REAL(__lxstat64)(ver, path, st); });
}

DLIO_PRELOAD_EXPORT int __fxstat(int ver, int fd, struct stat* st) {
  return TraceFdCall("fstat", "POSIX", fd, -1, -1,
                     [&] { return DLIO_REAL(__fxstat)(ver, fd, st); });
}

DLIO_PRELOAD_EXPORT int __fxstat64(int ver, int fd, struct stat64* st) {
  return TraceFdCall("fstat64", "POSIX", fd, -1, -1,
                     [&] { return DLIO_REAL(__fxstat64)(ver, fd, st); });
}

DLIO_PRELOAD_EXPORT int __fxstatat(int ver, int dirfd, const char* path, struct stat* st,
                                   int flags) {
  return TracePathCall("fstatat", dirfd, path,
                       [&] { return DLIO_REAL(__fxstatat)(ver, dirfd, path, st, flags); });
}

DLIO_PRELOAD_EXPORT int __fxstatat64(int ver, int dirfd, const char* path, struct stat64* st,
                                     int flags) {
  return TracePathCall("fstatat64", dirfd, path,
                       [&] { return DLIO_REAL(__fxstatat64)(ver, dirfd, path, st, flags); });
}

// A file's deletion, filtered like its opens. remove (C's, declared in stdio.h) is a call on a
// path, not a stream: POSIX like unlink; glibc's remove calls its own unlink (or rmdir) inside,
// past these hooks, so it is one event.
DLIO_PRELOAD_EXPORT int unlink(const char* path) {
  return TracePathCall("unlink", AT_FDCWD, path, [&] { return DLIO_REAL(unlink)(path); });
}

DLIO_PRELOAD_EXPORT int unlinkat(int dirfd, const char* path, int flags) {
  return TracePathCall("unlinkat", dirfd, path,
                       [&] { return DLIO_REAL(unlinkat)(dirfd, path, flags); });
}

DLIO_PRELOAD_EXPORT int remove(const char* path) {
  return TracePathCall("remove", AT_FDCWD, path, [&] { return DLIO_REAL(remove)(path); });
}

DLIO_PRELOAD_EXPORT void* mmap(void* addr, size_t len, int prot, int flags, int fd, off_t off) {
  return dlio::preload::TraceMmap("mmap", len, fd, off,
                                  [&] { return DLIO_REAL(mmap)(addr, len, prot, flags, fd, off); });
}

DLIO_PRELOAD_EXPORT void* mmap64(void* addr, size_t len, int prot, int flags, int fd, off64_t off) {
  return dlio::preload::TraceMmap(
      "mmap64", len, fd, off, [&] { return DLIO_REAL(mmap64)(addr, len, prot, flags, fd, off); });
}

DLIO_PRELOAD_EXPORT int munmap(void* addr, size_t len) {
  return dlio::preload::TraceMunmap(addr, len);
}
