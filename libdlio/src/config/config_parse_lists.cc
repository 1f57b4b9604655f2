// The list-valued keys of a config: storage.tiers and dataset.parquet.columns, each a list of
// maps whose errors name the entry's index and key ("storage.tiers[1].capacity_bytes").
#include <yaml-cpp/yaml.h>

#include "config/config_table.h"
#include "config/parse_context.h"
#include "config/value_parse.h"

namespace dlio::config_internal {
namespace {

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

// The MLPerf Storage v3.0 configs' spelling of a parquet column.
Result<bool> ParseColumnField(const ParseContext& ctx, const EntryField& f,
                              ParquetColumnConfig* column) {
  if (f.name == "name" || f.name == "dtype") {
    if (!f.value.IsScalar()) return TypeError(ctx, f.at, "a string", f.value);
    (f.name == "name" ? column->name : column->dtype) = f.value.Scalar();
    return true;
  }
  if (f.name == "size") {
    if (!f.value.IsScalar() || !ParseUintText(f.value.Scalar(), false, false, &column->size)) {
      return TypeError(ctx, f.at, "an unsigned integer", f.value);
    }
    return true;
  }
  if (f.name == "read") {
    if (!f.value.IsScalar() || !ParseBoolText(f.value.Scalar(), &column->read)) {
      return TypeError(ctx, f.at, "a boolean", f.value);
    }
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

Result<std::vector<ParquetColumnConfig>> ParseParquetColumns(const ParseContext& ctx,
                                                             const std::string& key,
                                                             const YAML::Node& node) {
  return ParseMapList<ParquetColumnConfig>(
      ctx, key, node, "a list of columns such as [{name: x, dtype: float32, size: 4}]",
      "name, dtype, size, read", "parquet column", &ParseColumnField);
}

}  // namespace dlio::config_internal
