// stdio streams on traced files (category "STDIO"). glibc's stdio reaches the kernel through
// internal calls the read/write hooks never see, so a stream's requests are recorded here, as the
// program made them: offset = the stream position before the call, sizes in bytes.
#include <stdio.h>

#include "trace_call.h"

namespace dlio::preload {
namespace {

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
// when nothing moved because of an error.
template <typename Call>
size_t TraceStream(const char* name, FILE* f, size_t size, size_t n, Call call) {
  if (!Tracing() || f == nullptr) return call();
  const int fd = fileno(f);
  if (!FdTable::Get().Traced(fd)) return call();
  HookScope scope;
  FileRef* file = FdTable::Get().Acquire(fd);
  const int64_t offset = ftello(f);
  const FaultWindow faults(size * n);
  const int64_t t0 = NowMicros();
  const size_t items = call();
  const int err = errno;
  const int64_t t1 = NowMicros();
  const int64_t faulted = faults.Taken();
  const int64_t ret =
      items == 0 && size * n > 0 && ferror(f) ? -err : static_cast<int64_t>(items * size);
  RecordCall(name, "STDIO", t0, t1, file, offset, static_cast<int64_t>(size * n), ret, faulted);
  ReleaseFileRef(file);
  errno = err;
  return items;
}

template <typename Call>
int TraceSeek(const char* name, FILE* f, int64_t offset, Call call) {
  if (!Tracing() || f == nullptr) return call();
  return TraceFdCall(name, "STDIO", fileno(f), offset, -1, call);
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
  const int64_t t0 = NowMicros();
  const int r = real(f);
  const int err = errno;
  const int64_t t1 = NowMicros();
  RecordCall("fclose", "STDIO", t0, t1, file, -1, -1, ErrOr(r, err));
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
  return TraceStream("fread", f, size, n, [&] { return DLIO_REAL(fread)(ptr, size, n, f); });
}

DLIO_PRELOAD_EXPORT size_t fwrite(const void* ptr, size_t size, size_t n, FILE* f) {
  return TraceStream("fwrite", f, size, n, [&] { return DLIO_REAL(fwrite)(ptr, size, n, f); });
}

DLIO_PRELOAD_EXPORT int fseek(FILE* f, long offset, int whence) {
  return TraceSeek("fseek", f, offset, [&] { return DLIO_REAL(fseek)(f, offset, whence); });
}

DLIO_PRELOAD_EXPORT int fseeko(FILE* f, off_t offset, int whence) {
  return TraceSeek("fseeko", f, offset, [&] { return DLIO_REAL(fseeko)(f, offset, whence); });
}

DLIO_PRELOAD_EXPORT int fseeko64(FILE* f, off64_t offset, int whence) {
  return TraceSeek("fseeko64", f, offset, [&] { return DLIO_REAL(fseeko64)(f, offset, whence); });
}

DLIO_PRELOAD_EXPORT int fclose(FILE* f) { return dlio::preload::TraceFclose(f); }
