// stdio streams on traced files (category "STDIO"). glibc's stdio reaches the kernel through
// internal calls the read/write hooks never see, so a stream's requests are recorded here, as the
// program made them: offset = the stream position before the call, sizes in bytes. Beneath each,
// the read and write system calls it made, derived from the stream's state (stdio_kernel.h), are
// recorded as category "SYSCALL" events within the call's time.
#include <stdio.h>
#include <sys/stat.h>

#include "stdio_kernel.h"
#include "trace_call.h"

namespace dlio::preload {
namespace {

// The kernel's file position: glibc's own record of it (_offset) when it keeps one (after a seek,
// until the end of the file is met), else one lseek that moves nothing.
int64_t KernelPosition(int fd, int64_t known) {
  if (known >= 0) return known;
  const off_t pos = DLIO_REAL(lseek)(fd, 0, SEEK_CUR);
  return pos < 0 ? -1 : static_cast<int64_t>(pos);
}

int64_t FileSize(int fd) {
  struct stat st {};
  return fstat(fd, &st) == 0 ? static_cast<int64_t>(st.st_size) : -1;
}

// Records the requests one after another within [t0, t1], each a share of it by its size.
void RecordKernel(const KernelRequests& k, int64_t t0, int64_t t1, const FileRef* file) {
  double total = 0;
  for (int i = 0; i < k.n; ++i) total += static_cast<double>(k.r[i].count);
  double done = 0;
  int64_t at = t0;
  for (int i = 0; i < k.n; ++i) {
    const KernelRequest& r = k.r[i];
    done += static_cast<double>(r.count);
    const int64_t end =
        total > 0 ? t0 + static_cast<int64_t>(static_cast<double>(t1 - t0) * done / total) : t1;
    RecordCall(r.write ? kKernelWriteName : kKernelReadName, kKernelCategory, at, end, file,
               r.offset, r.count, r.ret);
    at = end;
  }
}

template <typename Call>
FILE* TraceFopen(const char* name, const char* path, Call call) {
  FILE* f = nullptr;
  TraceOpen(name, "STDIO", AT_FDCWD, path, /*flags=*/-1, [&] {
    f = call();
    return f == nullptr ? -1 : fileno(f);
  });
  return f;
}

// fread/fwrite: `size` * `n` bytes requested; ret is the bytes moved (items * size), or -errno
// when nothing moved because of an error. The stream stays locked from the state before the
// call to the state after it, so another thread's calls on it do not come between.
template <typename Call>
size_t TraceStream(const char* name, bool write, FILE* f, size_t size, size_t n, Call call) {
  if (!Tracing() || f == nullptr) return call();
  const int fd = fileno(f);
  if (!FdTable::Get().Traced(fd)) return call();
  HookScope scope;
  FileRef* file = FdTable::Get().Acquire(fd);
  const int64_t offset = ftello(f);
  const int64_t want = static_cast<int64_t>(size * n);
  flockfile(f);
  const StreamState before = Snapshot(f);
  const bool kernel = write ? FwriteMayWrite(before, want) : FreadMayRead(before, want);
  const int64_t k0 = kernel && !write ? KernelPosition(fd, before.offset) : -1;
  const FaultWindow faults(size * n);
  const int64_t t0 = NowMicros();
  const size_t items = call();
  const int err = errno;
  const int64_t t1 = NowMicros();
  const int64_t faulted = faults.Taken();
  const StreamState after = Snapshot(f);
  const int64_t k1 = kernel ? KernelPosition(fd, after.offset) : -1;
  funlockfile(f);
  const int64_t ret =
      items == 0 && size * n > 0 && ferror(f) ? -err : static_cast<int64_t>(items * size);
  RecordCall(name, "STDIO", t0, t1, file, offset, want, ret, faulted);
  if (kernel) {
    RecordKernel(write ? FwriteRequests(before, after, want, k1, err)
                       : FreadRequests(before, after, want, k0, k1, err),
                 t0, t1, file);
  }
  ReleaseFileRef(file);
  errno = err;
  return items;
}

template <typename Call>
int TraceSeek(const char* name, FILE* f, int64_t offset, int whence, Call call) {
  if (!Tracing() || f == nullptr) return call();
  const int fd = fileno(f);
  if (!FdTable::Get().Traced(fd)) return call();
  HookScope scope;
  FileRef* file = FdTable::Get().Acquire(fd);
  flockfile(f);
  const StreamState before = Snapshot(f);
  const int64_t k0 = before.pending > 0 ? KernelPosition(fd, before.offset) : -1;
  const int64_t t0 = NowMicros();
  const int r = call();
  const int err = errno;
  const int64_t t1 = NowMicros();
  const StreamState after = Snapshot(f);
  const int64_t k1 = KernelPosition(fd, after.offset);
  const int64_t size = FseekNeedsSize(before, after, whence, k1) ? FileSize(fd) : -1;
  funlockfile(f);
  RecordCall(name, "STDIO", t0, t1, file, offset, -1, ErrOr(r, err));
  if (r == 0) RecordKernel(FseekRequests(before, after, whence, k0, k1, size), t0, t1, file);
  ReleaseFileRef(file);
  errno = err;
  return r;
}

int TraceFclose(FILE* f) {
  auto real = DLIO_REAL(fclose);
  if (InHook() || f == nullptr) return real(f);
  const int fd = fileno(f);
  if (!FdTable::Get().Traced(fd)) return real(f);
  FileRef* file = FdTable::Get().Acquire(fd);
  FdTable::Get().Set(fd, nullptr);
  if (!Active()) {
    ReleaseFileRef(file);
    return real(f);
  }
  HookScope scope;
  const StreamState before = Snapshot(f);
  const int64_t k0 = before.pending > 0 ? KernelPosition(fd, before.offset) : -1;
  const int64_t t0 = NowMicros();
  const int r = real(f);
  const int err = errno;
  const int64_t t1 = NowMicros();
  RecordCall("fclose", "STDIO", t0, t1, file, -1, -1, ErrOr(r, err));
  RecordKernel(FcloseRequests(before, k0, ErrOr(r, err)), t0, t1, file);
  ReleaseFileRef(file);
  FlushLocalBuffer();
  errno = err;
  return r;
}

}  // namespace
}  // namespace dlio::preload

using dlio::preload::TraceFopen;
using dlio::preload::TraceSeek;
using dlio::preload::TraceStream;

DLIO_PRELOAD_EXPORT FILE* fopen(const char* path, const char* mode) {
  return TraceFopen("fopen", path, [&] { return DLIO_REAL(fopen)(path, mode); });
}

DLIO_PRELOAD_EXPORT FILE* fopen64(const char* path, const char* mode) {
  return TraceFopen("fopen64", path, [&] { return DLIO_REAL(fopen64)(path, mode); });
}

DLIO_PRELOAD_EXPORT size_t fread(void* ptr, size_t size, size_t n, FILE* f) {
  return TraceStream("fread", false, f, size, n, [&] { return DLIO_REAL(fread)(ptr, size, n, f); });
}

DLIO_PRELOAD_EXPORT size_t fwrite(const void* ptr, size_t size, size_t n, FILE* f) {
  return TraceStream("fwrite", true, f, size, n,
                     [&] { return DLIO_REAL(fwrite)(ptr, size, n, f); });
}

DLIO_PRELOAD_EXPORT int fseek(FILE* f, long offset, int whence) {
  return TraceSeek("fseek", f, offset, whence, [&] { return DLIO_REAL(fseek)(f, offset, whence); });
}

DLIO_PRELOAD_EXPORT int fseeko(FILE* f, off_t offset, int whence) {
  return TraceSeek("fseeko", f, offset, whence,
                   [&] { return DLIO_REAL(fseeko)(f, offset, whence); });
}

DLIO_PRELOAD_EXPORT int fseeko64(FILE* f, off64_t offset, int whence) {
  return TraceSeek("fseeko64", f, offset, whence,
                   [&] { return DLIO_REAL(fseeko64)(f, offset, whence); });
}

DLIO_PRELOAD_EXPORT int fclose(FILE* f) { return dlio::preload::TraceFclose(f); }
