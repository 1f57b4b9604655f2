// The single-key checks of the table: ranges, accepted values, non-empty strings, distributions.
#include <algorithm>
#include <cmath>
#include <utility>

#include "config/config_table.h"
#include "core/utf8.h"

namespace dlio::config_internal {
namespace {

// "1 TiB" for exact multiples of a binary unit, else the number of bytes.
std::string Bytes(uint64_t v) {
  static const std::pair<uint64_t, const char*> kUnits[] = {{uint64_t{1} << 50, "PiB"},
                                                            {uint64_t{1} << 40, "TiB"},
                                                            {uint64_t{1} << 30, "GiB"},
                                                            {uint64_t{1} << 20, "MiB"},
                                                            {uint64_t{1} << 10, "KiB"}};
  for (const auto& [unit, name] : kUnits) {
    if (v >= unit && v % unit == 0) return StrCat(v / unit, " ", name);
  }
  return std::to_string(v);
}

std::string UintRange(const KeySpec& spec) {
  const bool sizes = spec.flags & kSizeUnits;
  if (spec.uint_max == UINT64_MAX) {
    return spec.uint_min > 0 ? StrCat(">= ", spec.uint_min) : "";
  }
  return StrCat(spec.uint_min, " to ",
                (sizes ? Bytes(spec.uint_max) : std::to_string(spec.uint_max)));
}

std::string IntRange(const KeySpec& spec) {
  std::string range;
  if (spec.int_max != INT64_MAX) {
    range = StrCat(spec.int_min, " to ", spec.int_max);
  } else if (spec.int_min != INT64_MIN) {
    range = StrCat(">= ", spec.int_min);
  }
  if ((spec.flags & kMinusOneOff) && !range.empty()) range = "-1, or " + range;
  return range;
}

std::string DoubleRange(const KeySpec& spec) {
  const bool exclusive = spec.flags & kMinExclusive;
  const bool has_min = std::isfinite(spec.double_min), has_max = std::isfinite(spec.double_max);
  if (has_min && has_max) {
    return std::string(exclusive ? "(" : "[") + FormatDouble(spec.double_min) + ", " +
           FormatDouble(spec.double_max) + "]";
  }
  if (has_min) return (exclusive ? "> " : ">= ") + FormatDouble(spec.double_min);
  if (has_max) return "<= " + FormatDouble(spec.double_max);
  return "";
}

std::string OutOfRange(const KeySpec& spec, const std::string& value) {
  return spec.path + ": " + value + " is out of range (accepted: " + RangeText(spec) + ")";
}

bool InDoubleRange(const KeySpec& spec, double v) {
  const bool above_min = (spec.flags & kMinExclusive) ? v > spec.double_min : v >= spec.double_min;
  return above_min && v <= spec.double_max;
}

std::string CheckDistribution(const KeySpec& spec, const DistributionSpec& d) {
  Status valid = d.Validate(spec.path);
  if (!valid.ok()) return valid.message();
  const std::pair<const char*, double> params[] = {
      {"mean", d.Mean()}, {"stdev", d.stdev}, {"min", d.min}, {"max", d.max}};
  for (const auto& [name, v] : params) {
    if (v > spec.double_max) {
      return spec.path + "." + name + ": " + FormatDouble(v) +
             " is out of range (accepted: " + RangeText(spec) + ")";
    }
  }
  return "";
}

// Each tier: a known type, a folder for a directory tier, a capacity and 1 to 64 threads.
std::string CheckCacheTiers(const KeySpec& spec, const std::vector<CacheTierOptions>& tiers) {
  for (size_t i = 0; i < tiers.size(); ++i) {
    const CacheTierOptions& t = tiers[i];
    const std::string key = StrCat(spec.path, "[", i, "].");
    if (EnumName(t.type) == "unknown") {  // only a cast makes one: parsing refuses the rest
      return StrCat(key, "type: value ", static_cast<int>(t.type), " is not one of ",
                    EnumNameList<CacheTierType>());
    }
    if (t.type == CacheTierType::kDirectory && t.path.empty()) {
      return key + "path must name the folder of a directory tier";
    }
    if (t.capacity_bytes == 0) return key + "capacity_bytes must be given and > 0";
    if (t.threads < 1 || t.threads > 64) {
      return StrCat(key, "threads: ", t.threads, " is out of range (accepted: 1 to 64)");
    }
  }
  return "";
}

}  // namespace

std::string RangeText(const KeySpec& spec) {
  switch (spec.type) {
    case KeyType::kUint:
      return UintRange(spec);
    case KeyType::kInt:
      return IntRange(spec);
    case KeyType::kDouble:
      return DoubleRange(spec);
    case KeyType::kDistribution:
      return std::isfinite(spec.double_max) ? "0 to " + FormatDouble(spec.double_max) + " s" : "";
    case KeyType::kString:
      return (spec.flags & kNonEmpty) ? "not empty" : "";
    default:
      return "";
  }
}

Result<CacheTierType> ParseTierType(const std::string& key, const std::string& text) {
  if (auto type = EnumFromName<CacheTierType>(text)) return *type;
  return Status::InvalidArgument(key, ": '", text, "' is not one of ",
                                 EnumNameList<CacheTierType>());
}

std::string CheckValue(const KeySpec& spec, WorkloadConfig& config) {
  if (!spec.alias_of.empty()) return "";
  switch (spec.type) {
    case KeyType::kUint: {
      const uint64_t v = spec.uint_ref(config);
      return v < spec.uint_min || v > spec.uint_max ? OutOfRange(spec, std::to_string(v)) : "";
    }
    case KeyType::kInt: {
      const int64_t v = spec.int_ref ? spec.int_ref(config) : spec.int32_ref(config);
      if (v == -1 && (spec.flags & kMinusOneOff)) return "";
      return v < spec.int_min || v > spec.int_max ? OutOfRange(spec, std::to_string(v)) : "";
    }
    case KeyType::kDouble: {
      const double v = spec.double_ref(config);
      if (!std::isfinite(v)) return spec.path + " must be a finite number, got " + FormatDouble(v);
      return InDoubleRange(spec, v) ? "" : OutOfRange(spec, FormatDouble(v));
    }
    case KeyType::kString: {
      const std::string& v = spec.string_ref(config);
      if ((spec.flags & kNonEmpty) && v.empty()) return spec.path + " must not be empty";
      // YAML and the JSON dlio writes (config.json, summary.json, markers) are Unicode text.
      if (!IsValidUtf8(v)) return spec.path + " is not valid UTF-8 text";
      if (spec.accepted.empty()) return "";
      for (const std::string& a : spec.accepted) {
        if (a == v) return "";
      }
      return spec.path + ": '" + v + "' is not one of " + JoinAccepted(spec.accepted);
    }
    case KeyType::kEnum: {
      const int v = spec.enum_get(config);
      if (v >= 0 && static_cast<size_t>(v) < spec.accepted.size()) return "";
      return StrCat(spec.path, ": value ", v, " is not one of ", JoinAccepted(spec.accepted));
    }
    case KeyType::kDistribution:
      return CheckDistribution(spec, spec.dist_ref(config));
    case KeyType::kCacheTiers:
      return CheckCacheTiers(spec, spec.tiers_ref(config));
    case KeyType::kMapList:
      return spec.map_list.check(spec.path, config);
    default:
      return "";
  }
}

}  // namespace dlio::config_internal
