// The placement and eviction policies of TieredCache (dlio/cache.h) behind one interface: the
// cache asks a policy's capabilities and ranks, never its name.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "dlio/cache.h"

namespace dlio::cache_internal {

// The rank of a file that will not be used again (farthest).
inline constexpr double kNeverUsed = std::numeric_limits<double>::infinity();

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

// A file to hold next and the position in the future access sequence of its next use.
struct UpcomingFile {
  const std::string* path = nullptr;
  size_t position = 0;
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
  virtual std::vector<UpcomingFile> Upcoming(size_t max) const {
    (void)max;
    return {};
  }
  // The rank `path` will have when the reader reaches `position` (uses_future): its first use
  // not consumed yet at or after `position`; EvictionRank(path) is its rank now.
  virtual double RankAt(const std::string& path, size_t position) const {
    (void)position;
    return EvictionRank(path);
  }
};

std::unique_ptr<CachePolicy> MakeCachePolicy(CachePolicyKind kind);

}  // namespace dlio::cache_internal
