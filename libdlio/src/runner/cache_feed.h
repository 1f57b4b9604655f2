// The runner's side of the tiered storage's cache (dlio/cache.h): the clairvoyant policy gets
// this rank's coming files from the sampler's plans, and each epoch its cache statistics.
#pragma once

#include <cstdint>

#include "dlio/cache.h"
#include "dlio/loop.h"
#include "dlio/runner.h"
#include "dlio/sampler.h"
#include "dlio/tracer.h"

namespace dlio::runner_internal {

// Hands `cache` (when it uses future accesses) the files this rank opens in epochs `first` to
// `last` (0-based) in order: the plans of `loop`'s sampler for `request` with those epochs, each
// run of samples of one file counted as one open.
Status FeedCacheFuture(TieredCache* cache, const LoopParts& loop, PlanRequest request,
                       uint64_t first, uint64_t last);

// The statistics of the epoch that just ended (tiers fastest first, then the source), and the
// counters reset for the next one.
std::vector<CacheTierStats> TakeEpochCacheStats(TieredCache* cache);

// Records an epoch's statistics (TakeEpochCacheStats) in `tracer`, category "cache": for each
// level and counter one event "cache.epoch.<counter>" at `end_us` (no duration), fname the
// level's name, offset its tier (-1: the source), count the counter's value, epoch `epoch`.
void TraceEpochCacheStats(Tracer* tracer, int64_t epoch, int64_t end_us,
                          const std::vector<CacheTierStats>& levels);

}  // namespace dlio::runner_internal
