#include "cache/cache_epoch.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dlio/cache_server.h"

namespace dlio::cache_internal {

// More future accesses than this are not planned at once (memory of the cache's index).
constexpr size_t kMaxFutureAccesses = size_t{1} << 22;

Status FeedCacheFuture(TieredCache* cache, const EpochPlan& plan) {
  if (cache == nullptr || !cache->uses_future_accesses() || !plan.files_of) return Status::OK();
  std::vector<std::string> paths;
  for (uint64_t epoch = plan.first_epoch;
       epoch <= plan.last_epoch && paths.size() < kMaxFutureAccesses; ++epoch) {
    DLIO_RETURN_NOT_OK(plan.files_of(epoch, &paths));
  }
  cache->SetFutureAccesses(std::move(paths));
  return Status::OK();
}

std::vector<CacheTierStats> TakeEpochCacheStats(TieredCache* cache) {
  if (cache == nullptr) return {};
  CacheStats stats = cache->TakeStats();
  if (stats.tiers.empty()) return {};  // a rank of a node whose first rank reports its cache
  stats.tiers.push_back(std::move(stats.source));
  return std::move(stats.tiers);
}

StatsBlock CacheStatsBlock(const std::vector<CacheTierStats>& levels, const std::string& policy,
                           const std::string& scope) {
  StatsBlock block;
  block.name = "cache";
  block.epoch_json = CacheLevelsJson(levels);
  block.epoch_key = "levels";
  // node scope: the node's shared cache (every rank of that node); process: the rank's own.
  block.summary_json = nlohmann::json{{"policy", policy}, {"scope", scope}}.dump();
  uint64_t hits = 0;
  for (size_t i = 0; i + 1 < levels.size(); ++i) hits += levels[i].hits;
  const uint64_t source_hits = levels.empty() ? 0 : levels.back().hits;
  block.progress =
      "cache hits " + std::to_string(hits) + "/" + std::to_string(hits + source_hits) + " opens";
  return block;
}

void TraceEpochCacheStats(Tracer* tracer, int64_t epoch, int64_t end_us,
                          const std::vector<CacheTierStats>& levels) {
  if (tracer == nullptr || !tracer->enabled()) return;
  struct Counter {
    const char* name;
    uint64_t CacheTierStats::*field;
  };
  static constexpr Counter kCounters[] = {
      {"cache.epoch.hits", &CacheTierStats::hits},
      {"cache.epoch.misses", &CacheTierStats::misses},
      {"cache.epoch.read_through", &CacheTierStats::read_through},
      {"cache.epoch.bytes_served", &CacheTierStats::bytes_served},
      {"cache.epoch.bytes_copied", &CacheTierStats::bytes_copied},
      {"cache.epoch.files_copied", &CacheTierStats::files_copied},
      {"cache.epoch.evictions", &CacheTierStats::evictions},
      {"cache.epoch.invalidations", &CacheTierStats::invalidations},
      {"cache.epoch.occupancy_bytes", &CacheTierStats::occupancy_bytes},
  };
  for (size_t level = 0; level < levels.size(); ++level) {
    const CacheTierStats& stats = levels[level];
    const bool source = level + 1 == levels.size();
    for (const Counter& counter : kCounters) {
      TraceEvent e;
      e.name = counter.name;
      e.cat = "cache";
      e.start_us = end_us;
      e.file_id = tracer->InternFile(stats.name);
      e.offset = source ? -1 : static_cast<int64_t>(level);
      e.count = static_cast<int64_t>(stats.*counter.field);
      e.epoch = epoch;
      tracer->Record(e);
    }
  }
}

}  // namespace dlio::cache_internal
