// The descriptors libdlio_cache_preload.so answered for: which source file each names, which level
// serves it (a tier's copy, or the source with its emulated cost) and how many bytes were read.
// Descriptors of other files have no entry: their reads cost one relaxed atomic load.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "common/ref_table.h"

namespace dlio::cache_preload {

// One open of a source file, shared (reference-counted) by its dups.
struct CachedFile {
  std::atomic<int32_t> refs;
  int32_t tier;  // the tier whose copy the descriptor reads; -1: the source
  bool costed;   // reads pay the source's latency and bandwidth (the source of a `slow` server)
  std::atomic<uint64_t> bytes;  // read through any descriptor of this open (and mappings)
  std::atomic<uint64_t> calls;  // stdio: latencies charged (one per buffer refill)
  uint32_t len;
  char path[1];  // len + 1 bytes, NUL-terminated
};

// nullptr when out of memory.
CachedFile* NewCachedFile(const char* path, size_t len, int tier, bool costed);
// Drops a reference; the last one tells the server the bytes read (kReadReport) and frees it.
void ReleaseCachedFile(CachedFile* file);

// fd -> CachedFile (RefTable: a dup2 onto a cached descriptor releases its entry, which closes
// that open). A process-wide singleton because descriptors are.
class FileTable : public preload::RefTable<CachedFile, ReleaseCachedFile> {
 public:
  static FileTable& Get();
};

// Adds `bytes` read in `calls` calls to fd's count and, when it reads the costed source, sleeps
// for the source's cost (latency per call plus bytes over bandwidth). Nothing for other fds.
void CountRead(int fd, int64_t bytes, uint64_t calls = 1);
// The same for a file already acquired.
void CountRead(CachedFile* file, int64_t bytes, uint64_t calls);

}  // namespace dlio::cache_preload
