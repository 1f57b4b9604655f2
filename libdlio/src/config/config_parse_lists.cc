// storage.tiers, a list of maps whose errors name the entry's index and key
// ("storage.tiers[1].capacity_bytes"), read with ParseMapList (parse_context.h).
#include <yaml-cpp/yaml.h>

#include "config/config_table.h"
#include "config/parse_context.h"
#include "config/value_parse.h"

namespace dlio::config_internal {
namespace {

Result<bool> ParseTierField(const ParseContext& ctx, const EntryField& f, CacheTierOptions* tier) {
  if (f.name == "type" || f.name == "path") {
    if (!f.value.IsScalar()) return TypeError(ctx, f.at, "a string", f.value);
    if (f.name == "path") {
      tier->path = f.value.Scalar();
    } else {
      DLIO_ASSIGN_OR_RETURN(tier->type, ParseTierType(f.at, f.value.Scalar()));
    }
    return true;
  }
  if (f.name == "capacity_bytes" || f.name == "threads") {
    const bool units = f.name == "capacity_bytes";
    uint64_t v = 0;
    if (!f.value.IsScalar() || !ParseUintText(f.value.Scalar(), units, false, &v)) {
      return TypeError(ctx, f.at, units ? "a size in bytes such as 4GiB" : "an unsigned integer",
                       f.value);
    }
    (units ? tier->capacity_bytes : tier->threads) = v;
    return true;
  }
  return false;
}

}  // namespace

Result<std::vector<CacheTierOptions>> ParseCacheTiers(const ParseContext& ctx,
                                                      const std::string& key,
                                                      const YAML::Node& node) {
  return ParseMapList<CacheTierOptions>(
      ctx, key, node, "a list of tiers such as [{type: memory, capacity_bytes: 1GiB}]",
      "type, path, capacity_bytes, threads", "tier", &ParseTierField);
}

}  // namespace dlio::config_internal
