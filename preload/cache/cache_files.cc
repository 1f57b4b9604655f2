#include "cache_files.h"

#include <time.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "cache_client.h"

namespace dlio::cache_preload {

CachedFile* NewCachedFile(const char* path, size_t len, int tier, bool costed) {
  auto* file = static_cast<CachedFile*>(std::malloc(sizeof(CachedFile) + len));
  if (file == nullptr) return nullptr;
  file->refs.store(1, std::memory_order_relaxed);
  file->tier = tier;
  file->costed = costed;
  file->bytes.store(0, std::memory_order_relaxed);
  file->calls.store(0, std::memory_order_relaxed);
  file->len = static_cast<uint32_t>(len);
  std::memcpy(file->path, path, len);
  file->path[len] = '\0';
  return file;
}

void ReleaseCachedFile(CachedFile* file) {
  if (file == nullptr || file->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  const int err = errno;
  {
    HookScope scope;
    ReportRead(file->path, file->len, file->tier, file->bytes.load(std::memory_order_relaxed));
  }
  std::free(file);
  errno = err;
}

FileTable& FileTable::Get() {
  static FileTable table;  // constant-initialized: usable before any constructor runs
  return table;
}

void CountRead(CachedFile* file, int64_t bytes, uint64_t calls) {
  if (bytes > 0) file->bytes.fetch_add(static_cast<uint64_t>(bytes), std::memory_order_relaxed);
  if (!file->costed) return;
  const SourceCost cost = Cost();
  uint64_t ns = cost.latency_ns * calls;
  if (cost.bytes_per_s > 0 && bytes > 0) {
    ns += static_cast<uint64_t>(static_cast<double>(bytes) * 1e9 /
                                static_cast<double>(cost.bytes_per_s));
  }
  if (ns == 0) return;
  timespec left{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
  const int err = errno;
  while (clock_nanosleep(CLOCK_MONOTONIC, 0, &left, &left) == EINTR) {
  }
  errno = err;
}

void CountRead(int fd, int64_t bytes, uint64_t calls) {
  CachedFile* file = FileTable::Get().Acquire(fd);
  if (file == nullptr) return;
  CountRead(file, bytes, calls);
  ReleaseCachedFile(file);
}

}  // namespace dlio::cache_preload
