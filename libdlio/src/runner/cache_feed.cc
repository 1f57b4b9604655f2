#include "runner/cache_feed.h"

#include <string>
#include <vector>

namespace dlio::runner_internal {

// More future accesses than this are not planned at once (memory of the cache's index).
constexpr size_t kMaxFutureAccesses = size_t{1} << 22;

Status FeedCacheFuture(TieredCache* cache, const LoopParts& loop, PlanRequest request,
                       uint64_t first, uint64_t last) {
  if (cache == nullptr || !cache->uses_future_accesses()) return Status::OK();
  std::vector<std::string> paths;
  std::vector<SampleRef> plan;
  for (uint64_t epoch = first; epoch <= last && paths.size() < kMaxFutureAccesses; ++epoch) {
    request.epoch = epoch;
    DLIO_RETURN_NOT_OK(loop.sampler->Plan(request, &plan));
    for (size_t i = 0; i < plan.size(); ++i) {
      if (i > 0 && plan[i].file == plan[i - 1].file) continue;
      paths.push_back(loop.source->file_path(plan[i].file));
    }
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

}  // namespace dlio::runner_internal
