// CacheStats as JSON (dlio/cache_server.h): the cache server's kStats replies and the run
// report's cache sections name the fields the same way.
#include <iterator>
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
          {"failed_copies", t.failed_copies},
          {"occupancy_bytes", t.occupancy_bytes},
          {"occupancy_files", t.occupancy_files},
          {"peak_bytes", t.peak_bytes}};
}

Result<CacheTierStats> ParseLevel(const json& j) {
  CacheTierStats t;
  if (!j.is_object()) return Status::Corruption("cache statistics: a level is not an object");
  t.name = j.value("level", "");
  uint64_t* fields[] = {&t.capacity_bytes,  &t.hits,          &t.misses,
                        &t.read_through,    &t.bytes_served,  &t.bytes_copied,
                        &t.files_copied,    &t.evictions,     &t.invalidations,
                        &t.skipped_too_big, &t.failed_copies, &t.occupancy_bytes,
                        &t.occupancy_files, &t.peak_bytes};
  const char* names[] = {"capacity_bytes",  "hits",          "misses",
                         "read_through",    "bytes_served",  "bytes_copied",
                         "files_copied",    "evictions",     "invalidations",
                         "skipped_too_big", "failed_copies", "occupancy_bytes",
                         "occupancy_files", "peak_bytes"};
  for (size_t i = 0; i < std::size(fields); ++i) *fields[i] = j.value(names[i], uint64_t{0});
  return t;
}

}  // namespace

Result<CacheStats> ParseCacheStatsJson(const std::string& text) {
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("tiers") || !j["tiers"].is_array()) {
    return Status::Corruption("cache statistics: not an object with a tiers array");
  }
  CacheStats stats;
  for (const json& level : j["tiers"]) {
    DLIO_ASSIGN_OR_RETURN(CacheTierStats t, ParseLevel(level));
    stats.tiers.push_back(std::move(t));
  }
  DLIO_ASSIGN_OR_RETURN(stats.source, ParseLevel(j.value("source", json::object())));
  return stats;
}

std::string CacheLevelsJson(const std::vector<CacheTierStats>& levels) {
  json out = json::array();
  for (const CacheTierStats& t : levels) out.push_back(LevelJson(t));
  return out.dump();
}

Result<std::vector<CacheTierStats>> ParseCacheLevelsJson(const std::string& text) {
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_array()) return Status::Corruption("cache statistics: not an array of levels");
  std::vector<CacheTierStats> levels;
  for (const json& level : j) {
    DLIO_ASSIGN_OR_RETURN(CacheTierStats t, ParseLevel(level));
    levels.push_back(std::move(t));
  }
  return levels;
}

std::string CacheStatsJson(const CacheStats& stats) {
  json tiers = json::array();
  for (const CacheTierStats& t : stats.tiers) tiers.push_back(LevelJson(t));
  return json{{"tiers", tiers}, {"source", LevelJson(stats.source)}}.dump();
}

}  // namespace dlio
