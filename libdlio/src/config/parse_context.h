// What parsing a config text carries along (its source and warnings), the messages naming the
// source and line, and the parsers of list-valued keys (config_parse_lists.cc).
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "dlio/config.h"
#include "dlio/status.h"

namespace dlio::config_internal {

struct ParseContext {
  std::string source;      // file name, "<string>" or "override '...'"
  bool show_lines = true;  // an override's YAML has no useful line numbers
  std::vector<std::string>* warnings = nullptr;
  bool saw_name = false;  // the text set the top-level `name`
};

// "(in SOURCE line N)", or "(in SOURCE)" without line numbers.
std::string Where(const ParseContext& ctx, const YAML::Mark& mark);

// InvalidArgument "KEY: expected EXPECTED, got WHAT-NODE-IS (in SOURCE line N)".
Status TypeError(const ParseContext& ctx, const std::string& key, const std::string& expected,
                 const YAML::Node& node);

// Adds `message` to the parse's warnings (when it collects them).
void Warn(const ParseContext& ctx, const std::string& message);

// storage.tiers: a list of maps {type, path, capacity_bytes, threads}; errors name the entry's
// index and key ("storage.tiers[1].capacity_bytes").
Result<std::vector<CacheTierOptions>> ParseCacheTiers(const ParseContext& ctx,
                                                      const std::string& key,
                                                      const YAML::Node& node);

// dataset.parquet.columns: a list of maps {name, dtype, size, read}; errors name the entry's index
// and key ("dataset.parquet.columns[3].size").
Result<std::vector<ParquetColumnConfig>> ParseParquetColumns(const ParseContext& ctx,
                                                             const std::string& key,
                                                             const YAML::Node& node);

}  // namespace dlio::config_internal
