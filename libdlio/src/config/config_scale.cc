// ScaleConfig: `scale` applied to the counts named in `scale_keys`.
#include <algorithm>
#include <cmath>

#include "config/config_table.h"
#include "dlio/config.h"

namespace dlio::config_internal {

// The specs of the comma-separated keys of `scale_keys`: integer counts only.
Result<std::vector<const KeySpec*>> ScaleKeySpecs(const std::string& keys) {
  std::vector<const KeySpec*> specs;
  size_t start = 0;
  while (start <= keys.size()) {
    size_t comma = keys.find(',', start);
    if (comma == std::string::npos) comma = keys.size();
    std::string key = Trim(keys.substr(start, comma - start));
    start = comma + 1;
    if (key.empty()) continue;
    const KeySpec* spec = FindKey(key);
    if (spec != nullptr && !spec->alias_of.empty()) spec = FindKey(spec->alias_of);
    if (spec == nullptr) {
      return Status::InvalidArgument("scale_keys: unknown key '" + key + "'");
    }
    if (spec->uint_ref == nullptr && spec->int_ref == nullptr) {
      return Status::InvalidArgument("scale_keys: '" + key +
                                     "' is not an integer count (scale multiplies counts only)");
    }
    specs.push_back(spec);
  }
  return specs;
}

}  // namespace dlio::config_internal

namespace dlio {

using config_internal::KeySpec;
using config_internal::ScaleKeySpecs;

Result<WorkloadConfig> ScaleConfig(const WorkloadConfig& config, int world,
                                   std::vector<std::string>* notes) {
  if (!(config.scale > 0 && std::isfinite(config.scale))) {
    return Status::InvalidArgument("scale must be a finite number > 0, got " +
                                   config_internal::FormatDouble(config.scale));
  }
  DLIO_ASSIGN_OR_RETURN(std::vector<const KeySpec*> specs, ScaleKeySpecs(config.scale_keys));
  WorkloadConfig c = config;
  c.scale = 1.0;
  if (config.scale == 1.0) return c;
  const double f = config.scale;
  std::string changes;
  auto note = [&changes](const std::string& key, int64_t from, int64_t to) {
    changes += StrCat(changes.empty() ? "" : ", ", key, " ", from, " -> ", to);
  };
  for (const KeySpec* spec : specs) {
    const bool files =
        spec->path == "dataset.num_files_train" || spec->path == "dataset.num_files_eval";
    auto scaled = [&](double v) {
      const double floor = files ? std::min(v, static_cast<double>(std::max(world, 1))) : 1.0;
      return std::max(floor, std::round(v * f));
    };
    // A scaled count past the type (or the key's range) is an error, not a wrapped value.
    auto too_large = [&](double to) {
      return Status::InvalidArgument("scale " + config_internal::FormatDouble(f) + ": " +
                                     spec->path + " would become " +
                                     config_internal::FormatDouble(to) + ", past its range");
    };
    if (spec->uint_ref != nullptr) {
      uint64_t& v = spec->uint_ref(c);
      const uint64_t from = v;
      const double to = scaled(static_cast<double>(v));
      if (v > 0 && to >= 18446744073709551616.0) return too_large(to);
      if (v > 0) v = static_cast<uint64_t>(to);
      note(spec->path, static_cast<int64_t>(from), static_cast<int64_t>(v));
    } else {
      int64_t& v = spec->int_ref(c);
      const int64_t from = v;
      const double to = scaled(static_cast<double>(v));
      if (v > 0 && to >= 9223372036854775808.0) return too_large(to);
      if (v > 0) v = static_cast<int64_t>(to);
      note(spec->path, from, v);
    }
    const std::string problem = config_internal::CheckValue(*spec, c);
    if (!problem.empty()) {
      return Status::InvalidArgument("scale " + config_internal::FormatDouble(f) + ": " + problem);
    }
  }
  if (notes != nullptr) {
    notes->push_back("scale " + config_internal::FormatDouble(f) + ": " +
                     (changes.empty() ? "no counts to scale" : changes));
  }
  return c;
}

}  // namespace dlio
