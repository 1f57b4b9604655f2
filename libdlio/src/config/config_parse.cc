// Parsing of WorkloadConfig from YAML/JSON text, files and overrides, driven by config_table.cc.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "config/config_file.h"
#include "config/config_table.h"
#include "config/parse_context.h"
#include "config/value_parse.h"
#include "core/utf8.h"
#include "dlio/config.h"

namespace dlio {
namespace {

using config_internal::FindKey;
using config_internal::JoinAccepted;
using config_internal::KeySpec;
using config_internal::KeyType;
using config_internal::ParseCacheTiers;
using config_internal::ParseContext;
using config_internal::Trim;
using config_internal::TypeError;
using config_internal::Warn;
using config_internal::Where;

std::string Describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Null:
      return "nothing (null)";
    case YAML::NodeType::Scalar:
      return "'" + node.Scalar() + "'";
    default:
      return "an undefined value";
  }
}

}  // namespace

namespace config_internal {

std::string Where(const ParseContext& ctx, const YAML::Mark& mark) {
  if (ctx.show_lines && mark.line >= 0) {
    return StrCat("(in ", ctx.source, " line ", mark.line + 1, ")");
  }
  return "(in " + ctx.source + ")";
}

Status TypeError(const ParseContext& ctx, const std::string& key, const std::string& expected,
                 const YAML::Node& node) {
  return Status::InvalidArgument(key + ": expected " + expected + ", got " + Describe(node) + " " +
                                 Where(ctx, node.Mark()));
}

void Warn(const ParseContext& ctx, const std::string& message) {
  if (ctx.warnings) ctx.warnings->push_back(message);
}

}  // namespace config_internal

namespace {

constexpr const char* kDistributionParams = "type, mean, stdev, min, max, shape, scale, lam";

// What a distribution's map (or its sub-key overrides) named, for the untyped forms.
struct DistributionSeen {
  bool type = false, stdev = false, mean = false, range = false;
};

// Sets one parameter `param` (`key`.`param` as written) of `spec`.
Status SetDistributionParam(const ParseContext& ctx, const std::string& key,
                            const std::string& param, const YAML::Node& value,
                            const YAML::Mark& mark, DistributionSpec* spec,
                            DistributionSeen* seen) {
  const std::string sub = key + "." + param;
  if (param == "type") {
    const auto type = EnumFromName<DistributionSpec::Type>(value.IsScalar() ? value.Scalar() : "");
    if (!type)
      return TypeError(ctx, sub, "one of " + EnumNameList<DistributionSpec::Type>(), value);
    spec->type = *type;
    seen->type = true;
    return Status::OK();
  }
  const std::pair<const char*, double*> fields[] = {
      {"mean", &spec->mean},   {"stdev", &spec->stdev}, {"min", &spec->min}, {"max", &spec->max},
      {"shape", &spec->shape}, {"scale", &spec->scale}, {"lam", &spec->lam}};
  double* field = nullptr;
  for (const auto& [name, ptr] : fields) {
    if (param == name) field = ptr;
  }
  if (field == nullptr) {
    return Status::InvalidArgument("unknown key '", sub, "' ", Where(ctx, mark),
                                   " (a distribution takes ", kDistributionParams, ")");
  }
  if (!value.IsScalar() || !config_internal::ParseDoubleText(value.Scalar(), field)) {
    return TypeError(ctx, sub, "a number", value);
  }
  seen->mean |= param == "mean";
  seen->stdev |= param == "stdev";
  seen->range |= param == "min" || param == "max";
  return Status::OK();
}

// DLIO's untyped {mean, stdev} is a normal distribution; {min, max} reads naturally as uniform.
void InferDistributionType(const DistributionSeen& seen, DistributionSpec* spec) {
  if (seen.type || spec->type != DistributionSpec::Type::kConstant) return;
  if (seen.stdev && spec->stdev > 0) {
    spec->type = DistributionSpec::Type::kNormal;
  } else if (seen.range && !seen.mean && spec->mean == 0) {
    spec->type = DistributionSpec::Type::kUniform;
  }
}

Result<DistributionSpec> ParseDistribution(const ParseContext& ctx, const std::string& key,
                                           const YAML::Node& node) {
  DistributionSpec spec;
  const std::string expected =
      std::string("a number of seconds or a map {") + kDistributionParams + "}";
  if (node.IsScalar()) {
    double v = 0;
    if (!config_internal::ParseDoubleText(node.Scalar(), &v))
      return TypeError(ctx, key, expected, node);
    spec.mean = v;
    return spec;
  }
  if (!node.IsMap()) return TypeError(ctx, key, expected, node);
  DistributionSeen seen;
  for (const auto& item : node) {
    DLIO_RETURN_NOT_OK(SetDistributionParam(ctx, key, item.first.Scalar(), item.second,
                                            item.first.Mark(), &spec, &seen));
  }
  if (!seen.type && seen.stdev) spec.type = DistributionSpec::Type::kNormal;
  InferDistributionType(seen, &spec);
  return spec;
}

// A sub-key of a distribution-valued key, as Hydra's `++workload.train.computation_time.type=
// uniform` writes it: changes that one parameter of the distribution in place (a number becomes
// the distribution's mean). The distribution is checked whole by Validate(), as one override
// per parameter passes through states that are not valid yet (min set before max).
Status ApplyDistributionSubKey(ParseContext& ctx, WorkloadConfig* config, const KeySpec& spec,
                               const std::string& path, const YAML::Node& node,
                               const YAML::Mark& mark) {
  const std::string param = path.substr(path.rfind('.') + 1);
  DistributionSpec& d = spec.dist_ref(*config);
  DistributionSeen seen;
  DLIO_RETURN_NOT_OK(SetDistributionParam(ctx, spec.path, param, node, mark, &d, &seen));
  InferDistributionType(seen, &d);
  return Status::OK();
}

// The distribution-valued key `path` is a parameter of ("train.computation_time" for
// "train.computation_time.type"), or nullptr.
const KeySpec* DistributionParent(const std::string& path) {
  const size_t dot = path.rfind('.');
  if (dot == std::string::npos) return nullptr;
  const KeySpec* parent = FindKey(path.substr(0, dot));
  if (parent != nullptr && !parent->alias_of.empty()) parent = FindKey(parent->alias_of);
  return parent != nullptr && parent->type == KeyType::kDistribution ? parent : nullptr;
}

// The Store* functions store `node` into the field of `spec` of one key type. `key` is the path as
// the user wrote it (an alias).
Status StoreBool(ParseContext& ctx, WorkloadConfig* config, const KeySpec& spec,
                 const std::string& key, const YAML::Node& node) {
  bool v = false;
  if (!node.IsScalar() || !config_internal::ParseBoolText(node.Scalar(), &v)) {
    return TypeError(ctx, key, "a boolean (true/false, yes/no, on/off, 1/0)", node);
  }
  spec.bool_ref(*config) = v;
  return Status::OK();
}

Status StoreUint(ParseContext& ctx, WorkloadConfig* config, const KeySpec& spec,
                 const std::string& key, const YAML::Node& node) {
  uint64_t v = 0;
  const bool units = spec.flags & config_internal::kSizeUnits;
  if (!node.IsScalar() ||
      !config_internal::ParseUintText(node.Scalar(), units,
                                      spec.flags & config_internal::kRoundFraction, &v)) {
    return TypeError(ctx, key,
                     units ? "an unsigned integer or a size such as 4MiB" : "an unsigned integer",
                     node);
  }
  spec.uint_ref(*config) = v;
  return Status::OK();
}

Status StoreInt(ParseContext& ctx, WorkloadConfig* config, const KeySpec& spec,
                const std::string& key, const YAML::Node& node) {
  int64_t v = 0;
  if (!node.IsScalar() || !config_internal::ParseIntText(node.Scalar(), &v)) {
    return TypeError(ctx, key, "an integer", node);
  }
  if (spec.int32_ref) {
    if (v < INT32_MIN || v > INT32_MAX) {
      return TypeError(ctx, key, "an integer in " + config_internal::RangeText(spec), node);
    }
    spec.int32_ref(*config) = static_cast<int>(v);
  } else {
    spec.int_ref(*config) = v;
  }
  return Status::OK();
}

// A number, or TypeError naming `key`.
Result<double> NumberOf(ParseContext& ctx, const std::string& key, const YAML::Node& node) {
  double v = 0;
  if (!node.IsScalar() || !config_internal::ParseDoubleText(node.Scalar(), &v)) {
    return TypeError(ctx, key, "a number", node);
  }
  return v;
}

Status StoreDouble(ParseContext& ctx, WorkloadConfig* config, const KeySpec& spec,
                   const std::string& key, const YAML::Node& node) {
  DLIO_ASSIGN_OR_RETURN(spec.double_ref(*config), NumberOf(ctx, key, node));
  return Status::OK();
}

// kString and kEnum: UTF-8 text, trailing slashes stripped when the key asks, the key's own
// rewrite (`custom`) applied, then checked against its accepted values.
Status StoreText(ParseContext& ctx, WorkloadConfig* config, const KeySpec& spec,
                 const std::string& key, const YAML::Node& node) {
  if (!node.IsScalar() && !node.IsNull()) return TypeError(ctx, key, "a string", node);
  std::string v = node.IsScalar() ? node.Scalar() : "";
  if (!IsValidUtf8(v)) return TypeError(ctx, key, "valid UTF-8 text", node);
  if ((spec.flags & config_internal::kStripSlash) && v.size() > 1) {
    while (v.size() > 1 && v.back() == '/') v.pop_back();
  }
  if (spec.custom) {
    std::string note;
    v = spec.custom(*config, v, &note);
    if (!note.empty()) Warn(ctx, note + " " + Where(ctx, node.Mark()));
  }
  const auto found = std::find(spec.accepted.begin(), spec.accepted.end(), v);
  if (!spec.accepted.empty() && found == spec.accepted.end()) {
    return TypeError(ctx, key, "one of " + JoinAccepted(spec.accepted), node);
  }
  if (spec.type == KeyType::kEnum) {
    spec.enum_set(*config, static_cast<int>(found - spec.accepted.begin()));
  } else {
    spec.string_ref(*config) = v;
  }
  return Status::OK();
}

// A distribution's stdev: a positive one turns a constant into a normal distribution.
Status StoreDistributionStdev(ParseContext& ctx, WorkloadConfig* config, const KeySpec& spec,
                              const std::string& key, const YAML::Node& node) {
  DLIO_ASSIGN_OR_RETURN(const double v, NumberOf(ctx, key, node));
  DistributionSpec& d = spec.dist_ref(*config);
  d.stdev = v;
  if (d.type == DistributionSpec::Type::kConstant && v > 0) {
    d.type = DistributionSpec::Type::kNormal;
  }
  return Status::OK();
}

Status StoreUintList(ParseContext& ctx, WorkloadConfig* config, const KeySpec& spec,
                     const std::string& key, const YAML::Node& node) {
  std::vector<uint64_t> values;
  if (node.IsSequence()) {
    for (const auto& item : node) {
      uint64_t v = 0;
      if (!item.IsScalar() || !config_internal::ParseUintText(item.Scalar(), false, false, &v)) {
        return TypeError(ctx, key, "a list of unsigned integers", item);
      }
      values.push_back(v);
    }
  } else if (!node.IsNull()) {
    return TypeError(ctx, key, "a list of unsigned integers such as [1, 2]", node);
  }
  spec.uint_list_ref(*config) = std::move(values);
  return Status::OK();
}

// Stores `node` into the field of `spec`. `key` is the path as the user wrote it (an alias).
Status StoreValue(ParseContext& ctx, WorkloadConfig* config, const KeySpec& spec,
                  const std::string& key, const YAML::Node& node) {
  switch (spec.type) {
    case KeyType::kBool:
      return StoreBool(ctx, config, spec, key, node);
    case KeyType::kUint:
      return StoreUint(ctx, config, spec, key, node);
    case KeyType::kInt:
      return StoreInt(ctx, config, spec, key, node);
    case KeyType::kDouble:
      return StoreDouble(ctx, config, spec, key, node);
    case KeyType::kString:
    case KeyType::kEnum:
      return StoreText(ctx, config, spec, key, node);
    case KeyType::kDistribution: {
      DLIO_ASSIGN_OR_RETURN(spec.dist_ref(*config), ParseDistribution(ctx, key, node));
      return Status::OK();
    }
    case KeyType::kDistributionStdev:
      return StoreDistributionStdev(ctx, config, spec, key, node);
    case KeyType::kUintList:
      return StoreUintList(ctx, config, spec, key, node);
    case KeyType::kCacheTiers: {
      DLIO_ASSIGN_OR_RETURN(spec.tiers_ref(*config), ParseCacheTiers(ctx, key, node));
      return Status::OK();
    }
    case KeyType::kMapList:
      return spec.map_list.parse(ctx, key, node, config);
    case KeyType::kAny:
      return Status::OK();
  }
  return Status::Internal("unhandled key type of " + key);
}

// StoreValue, then the key's own checks (range, accepted values, ...), so an out-of-range value is
// reported with its file and line.
Status SetValue(ParseContext& ctx, WorkloadConfig* config, const KeySpec& spec,
                const std::string& key, const YAML::Node& node) {
  DLIO_RETURN_NOT_OK(StoreValue(ctx, config, spec, key, node));
  const std::string problem = config_internal::CheckValue(spec, *config);
  if (!problem.empty()) return Status::InvalidArgument(problem + " " + Where(ctx, node.Mark()));
  return Status::OK();
}

bool IsDeferred(const std::string& path) {
  const KeySpec* spec = FindKey(path);
  return spec && spec->type == KeyType::kDistributionStdev;
}

Status UnknownKey(const ParseContext& ctx, const std::string& path, const YAML::Mark& mark) {
  std::string message = "unknown key '" + path + "' " + Where(ctx, mark);
  std::string suggestion = config_internal::SuggestKey(path);
  if (!suggestion.empty()) message += " (did you mean '" + suggestion + "'?)";
  return Status::InvalidArgument(message);
}

// The name a key of the map at `path` stands for: its full path, with an alias resolved and the
// older section name data_reader read as reader.
std::string CanonicalKey(const std::string& path, std::string name) {
  if (path.empty() && name == "data_reader") name = "reader";
  const std::string child = path.empty() ? name : path + "." + name;
  const KeySpec* spec = FindKey(child);
  return spec != nullptr && !spec->alias_of.empty() ? spec->alias_of : child;
}

// YAML forbids a key twice in one map, and yaml-cpp would hand both over, the last silently
// winning: an error naming the key and both lines (also for two spellings of one key).
Status CheckDuplicateKeys(const ParseContext& ctx, const std::string& path, const YAML::Node& map) {
  std::map<std::string, std::pair<std::string, YAML::Mark>> seen;  // key -> spelling, mark
  for (const auto& item : map) {
    if (!item.first.IsScalar()) continue;  // reported by ApplyNode
    const std::string name = item.first.Scalar();
    const std::string written = path.empty() ? name : path + "." + name;
    const std::string key = CanonicalKey(path, name);
    auto [it, inserted] = seen.emplace(key, std::make_pair(written, item.first.Mark()));
    if (inserted) continue;
    const auto& [first_written, first_mark] = it->second;
    std::string message = "duplicate key '" + key + "'";
    if (first_written != written) {
      message += ", given as '" + first_written + "' and '" + written + "'";
    }
    if (ctx.show_lines && first_mark.line >= 0 && item.first.Mark().line >= 0) {
      message += StrCat(" (in ", ctx.source, " lines ", first_mark.line + 1, " and ",
                        item.first.Mark().line + 1, ")");
    } else {
      message += " (in " + ctx.source + ")";
    }
    return Status::InvalidArgument(message + ": a key may be given once");
  }
  return Status::OK();
}

// A map of DLIO's that dlio accepts whole (an unused key) but that also holds keys dlio uses
// (storage.storage_options: the s3 storage's keys among others): ApplyNode descends into it, so
// its used keys are set and the others warn as part of it.
bool PartlyUsedMap(const KeySpec& spec, const std::string& path, const YAML::Node& node) {
  return !spec.used() && spec.alias_of.empty() && node.IsMap() &&
         config_internal::IsSectionPrefix(path);
}

// Applies `node` at `path` ("" = the document root), descending into sections.
Status ApplyNode(ParseContext& ctx, WorkloadConfig* config, const std::string& path,
                 const YAML::Node& node, const YAML::Mark& key_mark) {
  if (!path.empty()) {
    if (const KeySpec* spec = FindKey(path); spec != nullptr && !PartlyUsedMap(*spec, path, node)) {
      if (!spec->alias_of.empty()) {
        const KeySpec* target = FindKey(spec->alias_of);
        if (target == nullptr) return Status::Internal("alias " + path + " has no target");
        return SetValue(ctx, config, *target, path, node);
      }
      if (!spec->used()) {
        Warn(ctx, "'" + path + "' " + Where(ctx, key_mark) +
                      " is a DLIO key that dlio accepts but does not emulate");
        return Status::OK();
      }
      if (path == "name") ctx.saw_name = true;
      return SetValue(ctx, config, *spec, path, node);
    }
    if (const KeySpec* dist = DistributionParent(path)) {
      return ApplyDistributionSubKey(ctx, config, *dist, path, node, key_mark);
    }
    if (!config_internal::IsSectionPrefix(path)) {
      if (const KeySpec* any = config_internal::FindAnyAncestor(path)) {
        Warn(ctx, "'" + path + "' " + Where(ctx, key_mark) + " is part of '" + any->path +
                      "', a DLIO key that dlio accepts but does not emulate");
        return Status::OK();
      }
      return UnknownKey(ctx, path, key_mark);
    }
    if (path == "model" && node.IsScalar()) {  // DLIO's `model: cosmoflow`
      config->model.name = node.Scalar();
      return Status::OK();
    }
  }
  if (node.IsNull()) return Status::OK();  // an empty section
  if (!node.IsMap()) {
    return TypeError(ctx, path.empty() ? "the document" : path, "a map of keys", node);
  }
  DLIO_RETURN_NOT_OK(CheckDuplicateKeys(ctx, path, node));
  // Two passes: DLIO's *_stdev siblings modify the distribution set by their main key,
  // whichever comes first in the file.
  for (int pass = 0; pass < 2; ++pass) {
    for (const auto& item : node) {
      if (!item.first.IsScalar()) {
        return TypeError(ctx, path.empty() ? "the document" : path, "string keys", item.first);
      }
      std::string name = item.first.Scalar();
      if (path.empty()) {
        if (name == "hydra" || name == "defaults") continue;  // Hydra's own sections
        if (name == "workload") {
          if (pass == 1) continue;
          DLIO_RETURN_NOT_OK(ApplyNode(ctx, config, "", item.second, item.first.Mark()));
          continue;
        }
        if (name == "data_reader") name = "reader";  // older DLIO section name
      }
      const std::string child = path.empty() ? name : path + "." + name;
      if (IsDeferred(child) != (pass == 1)) continue;
      DLIO_RETURN_NOT_OK(ApplyNode(ctx, config, child, item.second, item.first.Mark()));
    }
  }
  return Status::OK();
}

Status ParseInto(ParseContext& ctx, const std::string& text, WorkloadConfig* config) {
  try {
    YAML::Node root = YAML::Load(text);
    if (root.IsNull() || (root.IsMap() && root.size() == 0)) {
      Warn(ctx, ctx.source + " is empty: it sets no key, so every value keeps its default");
      return Status::OK();
    }
    DLIO_RETURN_NOT_OK(ApplyNode(ctx, config, "", root, root.Mark()));
    return config_internal::DeriveRecordShapes(config);
  } catch (const YAML::ParserException& e) {
    return Status::InvalidArgument(ctx.source, " line ", e.mark.line + 1, ", column ",
                                   e.mark.column + 1, ": YAML syntax error: ", e.msg);
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(ctx.source + ": YAML error: " + e.what());
  } catch (const std::exception& e) {
    return Status::Internal(ctx.source + ": " + e.what());
  }
}

}  // namespace

Result<WorkloadConfig> ParseConfig(const std::string& text, const std::string& source,
                                   const WorkloadConfig& base, std::vector<std::string>* warnings) {
  WorkloadConfig config = base;
  ParseContext ctx;
  ctx.source = source;
  ctx.warnings = warnings;
  DLIO_RETURN_NOT_OK(ParseInto(ctx, text, &config));
  return config;
}

Result<WorkloadConfig> LoadConfigFile(const std::string& path, const WorkloadConfig& base,
                                      std::vector<std::string>* warnings) {
  DLIO_ASSIGN_OR_RETURN(const std::string text, config_internal::ReadConfigFile(path));
  WorkloadConfig config = base;
  ParseContext ctx;
  ctx.source = path;
  ctx.warnings = warnings;
  DLIO_RETURN_NOT_OK(ParseInto(ctx, text, &config));
  if (!ctx.saw_name) config.name = std::filesystem::path(path).stem().string();
  return config;
}

Status ApplyOverride(WorkloadConfig* config, const std::string& assignment,
                     std::vector<std::string>* warnings) {
  const size_t eq = assignment.find('=');
  if (eq == std::string::npos) {
    return Status::InvalidArgument("override '" + assignment +
                                   "': expected key=value, e.g. dataset.num_files_train=8");
  }
  std::string key = Trim(assignment.substr(0, eq));
  const std::string value = assignment.substr(eq + 1);
  if (key.rfind("++", 0) == 0)
    key.erase(0, 2);
  else if (key.rfind("+", 0) == 0)
    key.erase(0, 1);
  if (key.rfind("workload.", 0) == 0) key.erase(0, 9);
  if (key.empty() || key == "workload") {
    return Status::InvalidArgument("override '" + assignment + "': missing key before '='");
  }
  ParseContext ctx;
  ctx.source = "override '" + assignment + "'";
  ctx.show_lines = false;
  ctx.warnings = warnings;
  const KeySpec* spec = FindKey(key);
  if (spec && !spec->alias_of.empty()) spec = FindKey(spec->alias_of);
  const bool string_key = spec && (spec->type == KeyType::kString || spec->type == KeyType::kEnum);
  try {
    YAML::Node node;
    bool parsed = true;
    try {
      node = YAML::Load(value);
    } catch (const YAML::ParserException& e) {
      if (!string_key) {
        return Status::InvalidArgument(ctx.source + ": value is not valid YAML: " + e.msg);
      }
      parsed = false;
    }
    // A path or other string with YAML punctuation ("a: b", "[x") is taken literally.
    if (string_key && (!parsed || !(node.IsScalar() || node.IsNull()))) {
      node = YAML::Node(Trim(value));
    }
    DLIO_RETURN_NOT_OK(ApplyNode(ctx, config, key, node, YAML::Mark::null_mark()));
    return config_internal::DeriveRecordShapes(config);
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(ctx.source + ": " + e.what());
  } catch (const std::exception& e) {
    return Status::Internal(ctx.source + ": " + e.what());
  }
}

}  // namespace dlio
