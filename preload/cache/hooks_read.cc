// Reads of the descriptors the cache answered for: counted for the read report, and when they
// read the source of a `slow` server, charged its cost (latency per call plus bytes over
// bandwidth) after the real call. A mapping is charged its length once, when it is made. stdio
// streams reach the kernel through glibc's internal calls, past these hooks: their reads are
// counted here, one latency per 4 KiB buffer refill (at most two per call: glibc reads a large
// request directly into the caller's buffer).
// glibc's <stdio.h> defines getline inline (a call of __getdelim) in optimized builds, and a
// definition of the exported getline must not follow it: the header's is renamed out of the way.
#define getline dlio_cache_stdio_inline_getline
#include <stdio.h>
#undef getline
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "cache_client.h"
#include "cache_files.h"

extern "C" {
ssize_t getline(char**, size_t*, FILE*);
ssize_t __read_chk(int, void*, size_t, size_t);
ssize_t __pread_chk(int, void*, size_t, off_t, size_t);
ssize_t __pread64_chk(int, void*, size_t, off64_t, size_t);
}

namespace dlio::cache_preload {
namespace {

constexpr uint64_t kStdioBuffer = 4096;

template <typename Call>
auto Counted(int fd, Call call) {
  const auto r = call();
  if (r >= 0 && !InHook() && FileTable::Get().Has(fd)) {
    CountRead(fd, static_cast<int64_t>(r));
  }
  return r;
}

// The bytes of fd's file a mapping of `len` bytes at `off` covers (0 when fstat fails).
int64_t MappedBytes(int fd, size_t len, off64_t off) {
  struct stat st;
  if (syscall(SYS_fstat, fd, &st) != 0 || st.st_size <= off) return 0;
  const auto avail = static_cast<uint64_t>(st.st_size - off);
  return static_cast<int64_t>(len < avail ? len : avail);
}

template <typename Call>
void* Mapped(int fd, size_t len, off64_t off, Call call) {
  void* p = call();
  if (p != MAP_FAILED && !InHook() && FileTable::Get().Has(fd)) {
    const int err = errno;
    CountRead(fd, MappedBytes(fd, len, off));
    errno = err;
  }
  return p;
}

// A stdio read that moved `bytes` of the stream f's file.
void CountStream(FILE* f, int64_t bytes) {
  if (bytes <= 0 || InHook()) return;
  const int fd = fileno(f);
  if (!FileTable::Get().Has(fd)) return;
  CachedFile* file = FileTable::Get().Acquire(fd);
  if (file == nullptr) return;
  const uint64_t before = file->bytes.load(std::memory_order_relaxed);
  const uint64_t after = before + static_cast<uint64_t>(bytes);
  uint64_t refills =
      (after + kStdioBuffer - 1) / kStdioBuffer - (before + kStdioBuffer - 1) / kStdioBuffer;
  if (refills > 2) refills = 2;
  file->calls.fetch_add(refills, std::memory_order_relaxed);
  CountRead(file, bytes, refills);
  ReleaseCachedFile(file);
}

}  // namespace
}  // namespace dlio::cache_preload

namespace cp = dlio::cache_preload;

DLIO_CACHE_EXPORT ssize_t read(int fd, void* buf, size_t n) {
  return cp::Counted(fd, [&] { return DLIO_REAL(read)(fd, buf, n); });
}

DLIO_CACHE_EXPORT ssize_t __read_chk(int fd, void* buf, size_t n, size_t buflen) {
  return cp::Counted(fd, [&] { return DLIO_REAL(__read_chk)(fd, buf, n, buflen); });
}

DLIO_CACHE_EXPORT ssize_t pread(int fd, void* buf, size_t n, off_t off) {
  return cp::Counted(fd, [&] { return DLIO_REAL(pread)(fd, buf, n, off); });
}

DLIO_CACHE_EXPORT ssize_t pread64(int fd, void* buf, size_t n, off64_t off) {
  return cp::Counted(fd, [&] { return DLIO_REAL(pread64)(fd, buf, n, off); });
}

DLIO_CACHE_EXPORT ssize_t __pread_chk(int fd, void* buf, size_t n, off_t off, size_t buflen) {
  return cp::Counted(fd, [&] { return DLIO_REAL(__pread_chk)(fd, buf, n, off, buflen); });
}

DLIO_CACHE_EXPORT ssize_t __pread64_chk(int fd, void* buf, size_t n, off64_t off, size_t buflen) {
  return cp::Counted(fd, [&] { return DLIO_REAL(__pread64_chk)(fd, buf, n, off, buflen); });
}

DLIO_CACHE_EXPORT ssize_t readv(int fd, const struct iovec* iov, int n) {
  return cp::Counted(fd, [&] { return DLIO_REAL(readv)(fd, iov, n); });
}

DLIO_CACHE_EXPORT ssize_t preadv(int fd, const struct iovec* iov, int n, off_t off) {
  return cp::Counted(fd, [&] { return DLIO_REAL(preadv)(fd, iov, n, off); });
}

DLIO_CACHE_EXPORT ssize_t preadv64(int fd, const struct iovec* iov, int n, off64_t off) {
  return cp::Counted(fd, [&] { return DLIO_REAL(preadv64)(fd, iov, n, off); });
}

DLIO_CACHE_EXPORT ssize_t preadv2(int fd, const struct iovec* iov, int n, off_t off, int flags) {
  return cp::Counted(fd, [&] { return DLIO_REAL(preadv2)(fd, iov, n, off, flags); });
}

DLIO_CACHE_EXPORT ssize_t preadv64v2(int fd, const struct iovec* iov, int n, off64_t off,
                                     int flags) {
  return cp::Counted(fd, [&] { return DLIO_REAL(preadv64v2)(fd, iov, n, off, flags); });
}

DLIO_CACHE_EXPORT void* mmap(void* addr, size_t len, int prot, int flags, int fd, off_t off) {
  return cp::Mapped(fd, len, off, [&] { return DLIO_REAL(mmap)(addr, len, prot, flags, fd, off); });
}

DLIO_CACHE_EXPORT void* mmap64(void* addr, size_t len, int prot, int flags, int fd, off64_t off) {
  return cp::Mapped(fd, len, off,
                    [&] { return DLIO_REAL(mmap64)(addr, len, prot, flags, fd, off); });
}

DLIO_CACHE_EXPORT size_t fread(void* ptr, size_t size, size_t n, FILE* f) {
  const size_t items = DLIO_REAL(fread)(ptr, size, n, f);
  cp::CountStream(f, static_cast<int64_t>(items * size));
  return items;
}

DLIO_CACHE_EXPORT size_t fread_unlocked(void* ptr, size_t size, size_t n, FILE* f) {
  const size_t items = DLIO_REAL(fread_unlocked)(ptr, size, n, f);
  cp::CountStream(f, static_cast<int64_t>(items * size));
  return items;
}

DLIO_CACHE_EXPORT char* fgets(char* s, int n, FILE* f) {
  char* r = DLIO_REAL(fgets)(s, n, f);
  if (r != nullptr) cp::CountStream(f, static_cast<int64_t>(strlen(r)));
  return r;
}

DLIO_CACHE_EXPORT int fgetc(FILE* f) {
  const int c = DLIO_REAL(fgetc)(f);
  if (c != EOF) cp::CountStream(f, 1);
  return c;
}

DLIO_CACHE_EXPORT int getc(FILE* f) {
  const int c = DLIO_REAL(getc)(f);
  if (c != EOF) cp::CountStream(f, 1);
  return c;
}

DLIO_CACHE_EXPORT ssize_t getdelim(char** line, size_t* n, int delim, FILE* f) {
  const ssize_t r = DLIO_REAL(getdelim)(line, n, delim, f);
  cp::CountStream(f, r);
  return r;
}

DLIO_CACHE_EXPORT ssize_t getline(char** line, size_t* n, FILE* f) {
  const ssize_t r = DLIO_REAL(getline)(line, n, f);
  cp::CountStream(f, r);
  return r;
}

// What a program compiled with optimization calls for getline (glibc's inline getline).
DLIO_CACHE_EXPORT ssize_t __getdelim(char** line, size_t* n, int delim, FILE* f) {
  const ssize_t r = DLIO_REAL(__getdelim)(line, n, delim, f);
  cp::CountStream(f, r);
  return r;
}
