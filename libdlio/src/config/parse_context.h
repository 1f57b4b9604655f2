// What parsing a config text carries along (its source and warnings), the messages naming the
// source and line, and the parsers of list-valued keys (storage.tiers: config_parse_lists.cc;
// the kMapList keys implementations declare: ParseMapList).
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

// One field of a list entry: its key as written ("storage.tiers[1].path") and its value.
struct EntryField {
  std::string name;
  std::string at;
  const YAML::Node& value;
};

// Parses one entry's field into *out: true, or false for a key the entry does not take.
template <typename T>
using FieldParser = Result<bool> (*)(const ParseContext& ctx, const EntryField& f, T* out);

// `node` as a list of maps, each an entry parsed field by field (null: an empty list).
// `list_example` and `map_keys` go into the messages ("a list of tiers such as [...]", "a map
// {type, path, ...}"); `entry_name` names an entry in an unknown key's message.
template <typename T>
Result<std::vector<T>> ParseMapList(const ParseContext& ctx, const std::string& key,
                                    const YAML::Node& node, const char* list_example,
                                    const char* map_keys, const char* entry_name,
                                    FieldParser<T> parse_field) {
  std::vector<T> entries;
  if (node.IsNull()) return entries;
  if (!node.IsSequence()) return TypeError(ctx, key, list_example, node);
  for (size_t i = 0; i < node.size(); ++i) {
    const YAML::Node& item = node[i];
    const std::string at = StrCat(key, "[", i, "]");
    if (!item.IsMap()) return TypeError(ctx, at, StrCat("a map {", map_keys, "}"), item);
    T entry;
    for (const auto& field : item) {
      const EntryField f{field.first.Scalar(), at + "." + field.first.Scalar(), field.second};
      DLIO_ASSIGN_OR_RETURN(const bool known, parse_field(ctx, f, &entry));
      if (!known) {
        return Status::InvalidArgument("unknown key '" + f.at + "' " +
                                       Where(ctx, field.first.Mark()) + " (a " + entry_name +
                                       " takes " + map_keys + ")");
      }
    }
    entries.push_back(std::move(entry));
  }
  return entries;
}

}  // namespace dlio::config_internal
