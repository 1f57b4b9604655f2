#include "runner/cache_options.h"

#include "dlio/loop.h"

namespace dlio {

void AddCacheOptions(const WorkloadConfig& config, StorageOptions* options) {
  options->tiered_source = config.storage.tiered_source;
  options->cache_policy = config.storage.cache_policy;
  options->cache_scope = config.storage.cache_scope;
  options->cache_tiers.clear();
  for (const CacheTierConfig& t : config.storage.tiers) {
    CacheTierOptions tier;
    tier.type = t.type == "directory" ? CacheTierOptions::Type::kDirectory
                                      : CacheTierOptions::Type::kMemory;
    tier.path = t.path;
    tier.capacity_bytes = t.capacity_bytes;
    tier.threads = static_cast<int>(t.threads);
    options->cache_tiers.push_back(std::move(tier));
  }
}

}  // namespace dlio
