// The tiered storage's keys (storage.tiered_source, storage.tiers, storage.cache_policy) as
// StorageOptions (dlio/cache.h, docs/caching.md).
#pragma once

#include "dlio/config.h"
#include "dlio/storage.h"

namespace dlio {

// Sets `options`' tiered fields from the config's storage section (StorageOptionsFor calls it).
void AddCacheOptions(const WorkloadConfig& config, StorageOptions* options);

}  // namespace dlio
