// The process-wide state of libdlio_cache_preload.so: its configuration (from the environment)
// and the one connection to the cache
// server that every thread shares (behind a mutex; a forked child opens its own lazily).
//
// Fail open: when the server cannot be reached, answers nonsense or goes away, the connection is
// given up for the rest of the process after one warning on stderr naming the socket, and every
// open reads the source itself.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "cache/cache_wire.h"
#include "common/hook_scope.h"
#include "common/real.h"

#define DLIO_CACHE_EXPORT extern "C" __attribute__((visibility("default")))

namespace dlio::cache_preload {

// The real functions (DLIO_REAL), the reentrancy flag and its scope: preload/common/'s.
using preload::HookScope;
using preload::InHook;

// True once the constructor found DLIO_CACHE_SOCKET and DLIO_CACHE_DATA_DIRS set.
bool Enabled();

// Whether the absolute path p[0, len) is under DLIO_CACHE_DATA_DIRS (never code or /proc, /sys,
// /dev: PathFilter's rules).
bool UnderDataDirs(const char* path, size_t len);

// What the server's source costs per call and per byte (zero until a server said so).
struct SourceCost {
  uint64_t latency_ns = 0;
  uint64_t bytes_per_s = 0;
  bool Any() const { return latency_ns > 0 || bytes_per_s > 0; }
};
SourceCost Cost();

// The server's answer to an open.
struct Opened {
  int fd = -1;    // the copy's descriptor (close-on-exec), when tier >= 0
  int tier = -1;  // -1: read the source
};

// Asks the server for the absolute path p[0, len). False when the server cannot be used (the
// caller opens the source; nothing to report); else `*out` (tier -1 when the server has no copy
// or answered an error for this file).
bool OpenThroughServer(const char* path, size_t len, Opened* out);

// Tells the server how many bytes were read from a descriptor it answered for (no reply).
void ReportRead(const char* path, size_t len, int tier, uint64_t bytes);

// Tells the server a source file is being written (its copies are dropped).
void Invalidate(const char* path, size_t len);

}  // namespace dlio::cache_preload
