// The placement and eviction policies of TieredCache (dlio/cache.h) behind one interface: the
// cache asks a policy's capabilities and ranks, never its name.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dlio/cache.h"

namespace dlio::cache_internal {

struct PolicyCapabilities {
  bool place_on_miss = false;  // an open that misses places the file
  bool copy_on_open = false;   // ... copied by the opening thread, which then reads the copy
                               // (else a background copy, the source serving meanwhile)
  bool wait_for_copy = false;  // an open finding its file's copy in progress waits for it (one
                               // not started yet is made by the opening thread); else the
                               // source serves it meanwhile
  bool evicts = false;         // may remove files to make room
  bool uses_future = false;    // places the files of Upcoming() ahead of the reader
};

// Requires external synchronization: TieredCache calls it with its lock held.
class CachePolicy {
 public:
  virtual ~CachePolicy() = default;
  virtual PolicyCapabilities capabilities() const = 0;
  // Every open of `path`, before the cache looks it up.
  virtual void OnOpen(const std::string& path) = 0;
  // `path` left every tier (evicted, invalidated).
  virtual void OnRemoved(const std::string& path) { (void)path; }
  // How much keeping `path` is worth losing: the resident file of highest rank is evicted first,
  // and only for an incoming file of lower rank.
  virtual double EvictionRank(const std::string& path) const = 0;
  // Whether a miss of `path` deserves a copy at all (place_on_miss).
  virtual bool WorthPlacing(const std::string& path) const {
    (void)path;
    return true;
  }
  virtual void SetFutureAccesses(std::vector<std::string> paths) { (void)paths; }
  // The distinct paths to hold next, soonest first, at most `max` (uses_future); valid until the
  // next SetFutureAccesses.
  virtual std::vector<const std::string*> Upcoming(size_t max) const {
    (void)max;
    return {};
  }
};

std::unique_ptr<CachePolicy> MakeCachePolicy(CachePolicyKind kind);

}  // namespace dlio::cache_internal
