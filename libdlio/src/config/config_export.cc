// ConfigToJson and ConfigKeyDocs: the config and the key table rendered for people and files.
#include <nlohmann/json.hpp>

#include "config/config_table.h"
#include "dlio/config.h"

namespace dlio {

using config_internal::FindKey;
using config_internal::JoinAccepted;
using config_internal::KeySpec;
using config_internal::KeyTable;
using config_internal::KeyType;

std::string ConfigToJson(const WorkloadConfig& config) {
  WorkloadConfig c = config;  // the table's accessors take a mutable config
  nlohmann::ordered_json root = nlohmann::ordered_json::object();
  for (const KeySpec& spec : KeyTable()) {
    if (!spec.emitted()) continue;
    nlohmann::ordered_json* node = &root;
    std::string rest = spec.path;
    for (size_t dot; (dot = rest.find('.')) != std::string::npos; rest.erase(0, dot + 1)) {
      node = &(*node)[rest.substr(0, dot)];
    }
    nlohmann::ordered_json& out = (*node)[rest];
    switch (spec.type) {
      case KeyType::kBool:
        out = spec.bool_ref(c);
        break;
      case KeyType::kUint:
        out = spec.uint_ref(c);
        break;
      case KeyType::kInt:
        out = spec.int_ref ? spec.int_ref(c) : static_cast<int64_t>(spec.int32_ref(c));
        break;
      case KeyType::kDouble:
        out = spec.double_ref(c);
        break;
      case KeyType::kString:
        out = (spec.flags & config_internal::kSecret) && !spec.string_ref(c).empty()
                  ? std::string("<redacted>")
                  : spec.string_ref(c);
        break;
      case KeyType::kEnum:
        out = config_internal::EnumValueName(spec, c);
        break;
      case KeyType::kDistribution: {
        const DistributionSpec& d = spec.dist_ref(c);
        out = nlohmann::ordered_json{{"type", DistributionTypeName(d.type)},
                                     {"mean", d.mean},
                                     {"stdev", d.stdev},
                                     {"min", d.min},
                                     {"max", d.max},
                                     {"shape", d.shape},
                                     {"scale", d.scale},
                                     {"lam", d.lam}};
        break;
      }
      case KeyType::kUintList:
        out = spec.uint_list_ref(c);
        break;
      case KeyType::kCacheTiers:
        out = nlohmann::ordered_json::array();
        for (const CacheTierOptions& t : spec.tiers_ref(c)) {
          out.push_back(nlohmann::ordered_json{{"type", std::string(EnumName(t.type))},
                                               {"path", t.path},
                                               {"capacity_bytes", t.capacity_bytes},
                                               {"threads", t.threads}});
        }
        break;
      case KeyType::kMapList:
        out = nlohmann::ordered_json::array();
        spec.map_list.to_json(c, &out);
        break;
      case KeyType::kDistributionStdev:
      case KeyType::kAny:
        break;
    }
  }
  return root.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

namespace {

// "enum" for keys with a closed set of values, else the type's name.
std::string TypeName(const KeySpec& spec) {
  return spec.accepted.empty() ? config_internal::KeyTypeName(spec.type) : "enum";
}

ConfigKeyDoc DocOf(const KeySpec& spec, WorkloadConfig& defaults) {
  ConfigKeyDoc doc;
  doc.key = spec.path;
  doc.description = spec.description;
  doc.used = spec.used() || !spec.alias_of.empty();
  doc.alias_of = spec.alias_of;
  if (!spec.alias_of.empty()) {
    const KeySpec* target = FindKey(spec.alias_of);
    doc.type = target ? TypeName(*target) : std::string("any");
    doc.default_value = std::string(1, '-');
    return doc;
  }
  doc.type = TypeName(spec);
  if (spec.flags & config_internal::kSizeUnits) doc.type += " (bytes, units ok)";
  doc.default_value = config_internal::RenderValue(spec, defaults);
  doc.accepted_values = JoinAccepted(spec.accepted);
  doc.range = config_internal::RangeText(spec);
  return doc;
}

}  // namespace

std::vector<ConfigKeyDoc> ConfigKeyDocs() {
  WorkloadConfig defaults;
  std::vector<ConfigKeyDoc> docs;
  for (const KeySpec& spec : KeyTable()) docs.push_back(DocOf(spec, defaults));
  return docs;
}

}  // namespace dlio
