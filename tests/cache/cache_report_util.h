// The cache statistics of a run's report, for the tests of tiered runs.
#pragma once

#include <catch2/catch.hpp>
#include <vector>

#include "dlio/cache.h"
#include "dlio/cache_server.h"
#include "dlio/runner.h"

namespace dlio::testing {

// The levels an epoch's "cache" statistics block holds (tiers fastest first, then the source);
// empty when the epoch has none (no tiered storage, or a rank whose node's first rank reports).
inline std::vector<CacheTierStats> CacheLevelsOf(const EpochReport& e) {
  for (const StatsBlock& block : e.storage_stats) {
    if (block.name != "cache") continue;
    auto levels = ParseCacheLevelsJson(block.epoch_json);
    REQUIRE(levels.ok());
    return std::move(levels).value();
  }
  return {};
}

}  // namespace dlio::testing
