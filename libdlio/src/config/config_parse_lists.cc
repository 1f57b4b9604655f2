// The list-valued keys of a config: storage.tiers and dataset.parquet.columns.
#include <yaml-cpp/yaml.h>

#include "config/parse_context.h"
#include "config/value_parse.h"

namespace dlio::config_internal {

Result<std::vector<CacheTierConfig>> ParseCacheTiers(const ParseContext& ctx,
                                                     const std::string& key,
                                                     const YAML::Node& node) {
  std::vector<CacheTierConfig> tiers;
  if (node.IsNull()) return tiers;
  if (!node.IsSequence()) {
    return TypeError(ctx, key, "a list of tiers such as [{type: memory, capacity_bytes: 1GiB}]",
                     node);
  }
  for (size_t i = 0; i < node.size(); ++i) {
    const YAML::Node& item = node[i];
    const std::string at = StrCat(key, "[", i, "]");
    if (!item.IsMap()) {
      return TypeError(ctx, at, "a map {type, path, capacity_bytes, threads}", item);
    }
    CacheTierConfig tier;
    for (const auto& field : item) {
      const std::string name = field.first.Scalar();
      const std::string sub = at + "." + name;
      const YAML::Node& value = field.second;
      if (name == "type" || name == "path") {
        if (!value.IsScalar()) return TypeError(ctx, sub, "a string", value);
        if (name == "path") {
          tier.path = value.Scalar();
        } else {
          DLIO_ASSIGN_OR_RETURN(tier.type, ParseTierType(sub, value.Scalar()));
        }
      } else if (name == "capacity_bytes" || name == "threads") {
        const bool units = name == "capacity_bytes";
        uint64_t v = 0;
        if (!value.IsScalar() || !ParseUintText(value.Scalar(), units, false, &v)) {
          return TypeError(ctx, sub, units ? "a size in bytes such as 4GiB" : "an unsigned integer",
                           value);
        }
        (units ? tier.capacity_bytes : tier.threads) = v;
      } else {
        return Status::InvalidArgument("unknown key '" + sub + "' " +
                                       Where(ctx, field.first.Mark()) +
                                       " (a tier takes type, path, capacity_bytes, threads)");
      }
    }
    tiers.push_back(std::move(tier));
  }
  return tiers;
}

// dataset.parquet.columns: a list of maps {name, dtype, size, read} (the MLPerf Storage v3.0
// configs' spelling); errors name the entry's index and key ("dataset.parquet.columns[3].size").
namespace {

Status ParseParquetColumn(const ParseContext& ctx, const std::string& at, const YAML::Node& item,
                          ParquetColumnConfig* column) {
  if (!item.IsMap()) return TypeError(ctx, at, "a map {name, dtype, size, read}", item);
  for (const auto& field : item) {
    const std::string name = field.first.Scalar();
    const std::string sub = at + "." + name;
    const YAML::Node& value = field.second;
    if (name == "name" || name == "dtype") {
      if (!value.IsScalar()) return TypeError(ctx, sub, "a string", value);
      (name == "name" ? column->name : column->dtype) = value.Scalar();
    } else if (name == "size") {
      if (!value.IsScalar() || !ParseUintText(value.Scalar(), false, false, &column->size)) {
        return TypeError(ctx, sub, "an unsigned integer", value);
      }
    } else if (name == "read") {
      if (!value.IsScalar() || !ParseBoolText(value.Scalar(), &column->read)) {
        return TypeError(ctx, sub, "a boolean", value);
      }
    } else {
      return Status::InvalidArgument("unknown key '" + sub + "' " + Where(ctx, field.first.Mark()) +
                                     " (a parquet column takes name, dtype, size, read)");
    }
  }
  return Status::OK();
}

}  // namespace

Result<std::vector<ParquetColumnConfig>> ParseParquetColumns(const ParseContext& ctx,
                                                             const std::string& key,
                                                             const YAML::Node& node) {
  std::vector<ParquetColumnConfig> columns;
  if (node.IsNull()) return columns;
  if (!node.IsSequence()) {
    return TypeError(ctx, key, "a list of columns such as [{name: x, dtype: float32, size: 4}]",
                     node);
  }
  for (size_t i = 0; i < node.size(); ++i) {
    ParquetColumnConfig column;
    DLIO_RETURN_NOT_OK(ParseParquetColumn(ctx, StrCat(key, "[", i, "]"), node[i], &column));
    columns.push_back(std::move(column));
  }
  return columns;
}

}  // namespace dlio::config_internal
