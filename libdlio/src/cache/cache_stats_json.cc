// CacheStats as JSON (dlio/cache_server.h): the cache server's kStats replies and the run
// report's cache sections name the fields the same way.
#include <nlohmann/json.hpp>

#include "dlio/cache_server.h"

namespace dlio {
namespace {

using json = nlohmann::json;

json LevelJson(const CacheTierStats& t) {
  return {{"level", t.name},
          {"capacity_bytes", t.capacity_bytes},
          {"hits", t.hits},
          {"misses", t.misses},
          {"read_through", t.read_through},
          {"bytes_served", t.bytes_served},
          {"bytes_copied", t.bytes_copied},
          {"files_copied", t.files_copied},
          {"evictions", t.evictions},
          {"invalidations", t.invalidations},
          {"skipped_too_big", t.skipped_too_big},
          {"occupancy_bytes", t.occupancy_bytes},
          {"occupancy_files", t.occupancy_files},
          {"peak_bytes", t.peak_bytes}};
}

}  // namespace

std::string CacheLevelsJson(const std::vector<CacheTierStats>& levels) {
  json out = json::array();
  for (const CacheTierStats& t : levels) out.push_back(LevelJson(t));
  return out.dump();
}

std::string CacheStatsJson(const CacheStats& stats) {
  json tiers = json::array();
  for (const CacheTierStats& t : stats.tiers) tiers.push_back(LevelJson(t));
  return json{{"tiers", tiers}, {"source", LevelJson(stats.source)}}.dump();
}

}  // namespace dlio
