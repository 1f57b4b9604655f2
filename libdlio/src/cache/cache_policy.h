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

// What prefetching a file into a tier takes (clairvoyant's planning): it can be queued now, MIN
// would not keep it, or a file it must displace cannot leave yet.
enum class Prefetch { kQueued, kSkipped, kBlocked };

// A copy held in a tier, as MIN weighs it when the reader reaches some position.
struct VictimCandidate {
  double rank = kNeverUsed;  // its first use at or after that position
  bool evictable = false;    // complete, and not to be read before that position
  uint64_t size = 0;
  const std::string* path = nullptr;
};

// The copies MIN evicts to hold `size` more bytes in a tier with `free` bytes free, farthest next
// use first (ties: those that may leave now, then by path, so the choice is deterministic). Fills
// `victims` and returns kQueued when all of them may leave now; kSkipped when MIN would not keep
// the incoming file (of rank `incoming_rank` after its use) and no file never used again makes
// room for it; kBlocked when a victim cannot leave yet or the tier cannot free enough.
Prefetch SelectMinVictims(std::vector<VictimCandidate> candidates, uint64_t free, uint64_t size,
                          double incoming_rank, std::vector<std::string>* victims);

std::unique_ptr<CachePolicy> MakeCachePolicy(CachePolicyKind kind);

}  // namespace dlio::cache_internal
