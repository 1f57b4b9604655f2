// The tiered storage's per-epoch hooks (Storage::OnEpochPlan, Storage::TakeEpochStats): the
// clairvoyant policy gets this rank's coming files from the run's plans, and each epoch its cache
// statistics become the "cache" statistics block and trace events.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dlio/cache.h"
#include "dlio/storage.h"
#include "dlio/tracer.h"

namespace dlio::cache_internal {

// Hands `cache` (when it uses future accesses) the files this rank opens in epochs
// plan.first_epoch to plan.last_epoch (0-based), in order.
Status FeedCacheFuture(TieredCache* cache, const EpochPlan& plan);

// The statistics of the epoch that just ended (tiers fastest first, then the source), and the
// counters reset for the next one; empty on a rank of a node whose first rank reports the cache.
std::vector<CacheTierStats> TakeEpochCacheStats(TieredCache* cache);

// The "cache" statistics block of an epoch's `levels` (TakeEpochCacheStats): per epoch the levels
// under "levels"; in the summary the policy and scope (storage.cache_policy, storage.cache_scope).
StatsBlock CacheStatsBlock(const std::vector<CacheTierStats>& levels, const std::string& policy,
                           const std::string& scope);

// Records an epoch's statistics (TakeEpochCacheStats) in `tracer`, category "cache": for each
// level and counter one event "cache.epoch.<counter>" at `end_us` (no duration), fname the
// level's name, offset its tier (-1: the source), count the counter's value, epoch `epoch`.
void TraceEpochCacheStats(Tracer* tracer, int64_t epoch, int64_t end_us,
                          const std::vector<CacheTierStats>& levels);

}  // namespace dlio::cache_internal
