// Lookups and rendering over the key table (config_table.cc holds the table itself).
#include <algorithm>
#include <charconv>
#include <cmath>

#include "config/config_table.h"

namespace dlio::config_internal {
namespace {

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

// "\"text\"". Appending (rather than "\"" + text) also keeps GCC 12 from a false -Wrestrict
// warning on the prepend in a Release build.
std::string Quoted(const std::string& text) {
  std::string out;
  out.reserve(text.size() + 2);
  out += '"';
  out += text;
  out += '"';
  return out;
}

}  // namespace

const KeySpec* FindKey(const std::string& path) {
  for (const KeySpec& k : KeyTable()) {
    if (k.path == path) return &k;
  }
  return nullptr;
}

bool IsSectionPrefix(const std::string& path) {
  const std::string prefix = path + ".";
  for (const KeySpec& k : KeyTable()) {
    if (k.path.compare(0, prefix.size(), prefix) == 0) return true;
  }
  return false;
}

const KeySpec* FindAnyAncestor(const std::string& path) {
  for (size_t dot = path.find('.'); dot != std::string::npos; dot = path.find('.', dot + 1)) {
    const KeySpec* spec = FindKey(path.substr(0, dot));
    if (spec && spec->type == KeyType::kAny && spec->alias_of.empty()) return spec;
  }
  return nullptr;
}

std::string SuggestKey(const std::string& path) {
  std::string best;
  size_t best_distance = SIZE_MAX;
  auto consider = [&](const std::string& candidate) {
    size_t d = EditDistance(path, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  };
  for (const KeySpec& k : KeyTable()) {
    consider(k.path);
    // Sections too, so a misspelled "readr:" suggests "reader".
    for (size_t dot = k.path.find('.'); dot != std::string::npos; dot = k.path.find('.', dot + 1)) {
      consider(k.path.substr(0, dot));
    }
  }
  // Close enough to be a typo: a few edits, scaled with the length of the key.
  size_t limit = std::max<size_t>(3, path.size() / 4);
  return best_distance <= limit ? best : "";
}

std::string FormatDouble(double value) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);
  if (ec != std::errc()) return "nan";
  return std::string(buf, end);
}

std::string RenderValue(const KeySpec& spec, WorkloadConfig& config) {
  switch (spec.type) {
    case KeyType::kBool:
      return spec.bool_ref(config) ? "true" : "false";
    case KeyType::kUint:
      return std::to_string(spec.uint_ref(config));
    case KeyType::kInt:
      return spec.int_ref ? std::to_string(spec.int_ref(config))
                          : std::to_string(spec.int32_ref(config));
    case KeyType::kDouble:
      return FormatDouble(spec.double_ref(config));
    case KeyType::kString:
      return Quoted(spec.string_ref(config));
    case KeyType::kEnum:
      return Quoted(EnumValueName(spec, config));
    case KeyType::kDistribution: {
      const DistributionSpec& d = spec.dist_ref(config);
      if (d.type == DistributionSpec::Type::kConstant) return FormatDouble(d.mean);
      return std::string("{type: ") + DistributionTypeName(d.type) +
             ", mean: " + FormatDouble(d.mean) + ", stdev: " + FormatDouble(d.stdev) + "}";
    }
    case KeyType::kDistributionStdev:
      return "-";
    case KeyType::kUintList: {
      std::string out = "[";
      for (uint64_t v : spec.uint_list_ref(config)) {
        out += (out.size() > 1 ? ", " : "") + std::to_string(v);
      }
      return out + "]";
    }
    case KeyType::kCacheTiers: {
      std::string out = "[";
      for (const CacheTierOptions& t : spec.tiers_ref(config)) {
        out += StrCat(out.size() > 1 ? ", " : "", "{type: ", EnumName(t.type),
                      t.path.empty() ? "" : ", path: " + t.path,
                      ", capacity_bytes: ", t.capacity_bytes, ", threads: ", t.threads, "}");
      }
      return out + "]";
    }
    case KeyType::kMapList:
      return spec.map_list.render(config);
    case KeyType::kAny:
      return "-";
  }
  return "-";
}

std::string EnumValueName(const KeySpec& spec, WorkloadConfig& config) {
  const int v = spec.enum_get(config);
  if (v < 0 || static_cast<size_t>(v) >= spec.accepted.size()) return std::to_string(v);
  return spec.accepted[static_cast<size_t>(v)];
}

const char* KeyTypeName(KeyType type) {
  switch (type) {
    case KeyType::kBool:
      return "bool";
    case KeyType::kUint:
      return "uint";
    case KeyType::kInt:
      return "int";
    case KeyType::kDouble:
      return "float";
    case KeyType::kString:
      return "string";
    case KeyType::kEnum:
      return "enum";
    case KeyType::kDistribution:
      return "distribution";
    case KeyType::kDistributionStdev:
      return "float";
    case KeyType::kUintList:
      return "uint list";
    case KeyType::kCacheTiers:
    case KeyType::kMapList:
      return "list of maps";
    case KeyType::kAny:
      return "any";
  }
  return "any";
}

std::string JoinAccepted(const std::vector<std::string>& values) {
  std::string out;
  for (const std::string& v : values) out += (out.empty() ? "" : ", ") + v;
  return out;
}

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

}  // namespace dlio::config_internal
