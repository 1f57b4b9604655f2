// The tiered storage's keys (storage.tiered_source, storage.tiers, storage.cache_policy) as
// StorageOptions (dlio/cache.h, docs/caching.md).
#pragma once

#include "dlio/config.h"
#include "dlio/storage.h"

namespace dlio {

// Sets `options`' tiered fields from the config's storage section.
void AddCacheOptions(const WorkloadConfig& config, StorageOptions* options);

// StorageOptionsFor(config) with the tiered fields set.
StorageOptions StorageOptionsWithCache(const WorkloadConfig& config);

}  // namespace dlio
