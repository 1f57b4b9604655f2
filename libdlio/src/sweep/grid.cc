// The sweep's grid: --vary parsing, checks, expansion and the points' names.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <set>

#include "dlio/sweep.h"

namespace dlio {
namespace {

constexpr size_t kMaxNameBytes = 160;

std::string Trim(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return "";
  const size_t e = s.find_last_not_of(" \t");
  return std::string(s.substr(b, e - b + 1));
}

// A value as a number, when the whole of it is one.
std::optional<double> Number(const std::string& s) {
  if (s.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (errno != 0 || end != s.c_str() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

bool SafeByte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '=' || c == '+' || c == '-';
}

// FNV-1a, 32 bits: stable across runs and builds.
std::string ShortHash(std::string_view s) {
  uint32_t h = 2166136261u;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 16777619u;
  }
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08x", h);
  return buf;
}

std::string Join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty()) out += separator;
    out += p;
  }
  return out;
}

// An integer written without anything else, e.g. "12" or "-3".
std::optional<int64_t> Integer(std::string_view s) {
  if (s.empty() || s.size() > 18) return std::nullopt;
  size_t i = s[0] == '-' ? 1 : 0;
  if (i == s.size()) return std::nullopt;
  int64_t v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    v = v * 10 + (s[i] - '0');
  }
  return s[0] == '-' ? -v : v;
}

// "LO:HI" or "LO:HI:STEP" of integers: LO, LO+STEP, ... up to HI inclusive. Anything else is
// the value itself.
Result<std::vector<std::string>> ExpandRange(const std::string& value, const std::string& quoted) {
  std::vector<std::string_view> parts;
  std::string_view rest = value;
  for (size_t colon; (colon = rest.find(':')) != std::string_view::npos;) {
    parts.push_back(rest.substr(0, colon));
    rest.remove_prefix(colon + 1);
  }
  parts.push_back(rest);
  std::vector<std::optional<int64_t>> n;
  for (auto p : parts) n.push_back(Integer(p));
  const bool range = (parts.size() == 2 || parts.size() == 3) &&
                     std::all_of(n.begin(), n.end(), [](const auto& v) { return v.has_value(); });
  if (!range) return std::vector<std::string>{value};
  const int64_t lo = *n[0], hi = *n[1], step = parts.size() == 3 ? *n[2] : 1;
  if (step <= 0 || lo > hi) {
    return Status::InvalidArgument(quoted, ": range '", value,
                                   "' is empty (LO:HI[:STEP] with LO <= HI and STEP >= 1)");
  }
  if (static_cast<uint64_t>((hi - lo) / step) >= kMaxSweepPoints) {
    return Status::InvalidArgument(quoted, ": range '", value, "' has more than ", kMaxSweepPoints,
                                   " values");
  }
  std::vector<std::string> out;
  for (int64_t v = lo; v <= hi; v += step) out.push_back(std::to_string(v));
  return out;
}

}  // namespace

Result<SweepAxis> ParseSweepAxis(std::string_view spec) {
  const std::string quoted = "--vary '" + std::string(spec) + "'";
  const size_t eq = spec.find('=');
  if (eq == std::string_view::npos) {
    return Status::InvalidArgument(quoted,
                                   ": expected KEY=v1,v2,... (e.g. reader.read_threads=1,2,4)");
  }
  SweepAxis axis;
  axis.key = Trim(spec.substr(0, eq));
  for (const char* prefix : {"++", "+"}) {
    if (axis.key.rfind(prefix, 0) == 0) {
      axis.key.erase(0, std::string_view(prefix).size());
      break;
    }
  }
  if (axis.key.rfind("workload.", 0) == 0) axis.key.erase(0, 9);
  if (axis.key.empty()) return Status::InvalidArgument(quoted, ": missing KEY before '='");
  if (axis.key.find_first_of(" \t,") != std::string::npos) {
    return Status::InvalidArgument(quoted, ": KEY '", axis.key, "' holds a space or a comma");
  }
  std::string_view rest = spec.substr(eq + 1);
  std::set<std::string> seen;
  for (size_t n = 1;; ++n) {
    const size_t comma = rest.find(',');
    const std::string value = Trim(rest.substr(0, comma));
    if (value.empty()) {
      return Status::InvalidArgument(quoted, ": value ", n, " of ", axis.key,
                                     " is empty (values are separated by single commas)");
    }
    DLIO_ASSIGN_OR_RETURN(std::vector<std::string> items, ExpandRange(value, quoted));
    for (auto& item : items) {
      if (!seen.insert(item).second) {
        return Status::InvalidArgument(quoted, ": value '", item, "' of ", axis.key,
                                       " is given twice");
      }
      axis.values.push_back(std::move(item));
    }
    if (axis.values.size() > kMaxSweepPoints) {
      return Status::InvalidArgument(quoted, ": more than ", kMaxSweepPoints, " values");
    }
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return axis;
}

Status CheckSweepAxes(const std::vector<SweepAxis>& axes) {
  if (axes.empty()) {
    return Status::InvalidArgument("sweep: no --vary KEY=v1,v2,... given (at least one is needed)");
  }
  std::set<std::string> keys;
  uint64_t points = 1;
  for (const auto& a : axes) {
    if (!keys.insert(a.key).second) {
      return Status::InvalidArgument("sweep: --vary ", a.key,
                                     " is given twice (list all its values in one --vary)");
    }
    if (a.values.empty()) return Status::InvalidArgument("sweep: --vary ", a.key, " has no value");
    points *= a.values.size();
    if (points > kMaxSweepPoints) {
      return Status::InvalidArgument("sweep: the grid has more than ", kMaxSweepPoints,
                                     " points (the --vary lists multiply)");
    }
  }
  return Status::OK();
}

Status SortLastAxisForSearch(std::vector<SweepAxis>* axes) {
  if (axes->empty()) return Status::OK();
  SweepAxis& last = axes->back();
  std::vector<std::pair<double, std::string>> numbered;
  for (const auto& v : last.values) {
    const auto n = Number(v);
    if (!n) {
      return Status::InvalidArgument(
          "sweep: --until-au-below searches along the last --vary key, ", last.key,
          ", in increasing order, so its values must be numbers; '", v, "' is not");
    }
    numbered.emplace_back(*n, v);
  }
  std::stable_sort(numbered.begin(), numbered.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i < numbered.size(); ++i) last.values[i] = numbered[i].second;
  return Status::OK();
}

std::vector<SweepPoint> ExpandSweepGrid(const std::vector<SweepAxis>& axes) {
  std::vector<SweepPoint> points;
  if (axes.empty()) return points;
  for (const auto& a : axes) {
    if (a.values.empty()) return points;
  }
  std::vector<size_t> at(axes.size(), 0);
  while (true) {
    SweepPoint p;
    for (size_t i = 0; i < axes.size(); ++i) p.values.push_back(axes[i].values[at[i]]);
    points.push_back(std::move(p));
    size_t i = axes.size();
    while (i > 0 && ++at[i - 1] == axes[i - 1].values.size()) at[--i] = 0;
    if (i == 0) return points;
  }
}

std::vector<std::string> SweepOverrides(const std::vector<SweepAxis>& axes,
                                        const SweepPoint& point) {
  std::vector<std::string> out;
  for (size_t i = 0; i < axes.size() && i < point.values.size(); ++i) {
    out.push_back(axes[i].key + "=" + point.values[i]);
  }
  return out;
}

std::string SweepPointLabel(const std::vector<SweepAxis>& axes, const SweepPoint& point) {
  return Join(SweepOverrides(axes, point), ", ");
}

std::string SweepPointName(const std::vector<SweepAxis>& axes, const SweepPoint& point) {
  const std::string exact = Join(SweepOverrides(axes, point), "__");
  std::string name = exact;
  bool changed = false;
  for (char& c : name) {
    if (!SafeByte(c)) {
      c = '_';
      changed = true;
    }
  }
  if (name.size() > kMaxNameBytes) {
    name.resize(kMaxNameBytes);
    changed = true;
  }
  if (!name.empty() && (name[0] == '.' || name[0] == '-')) {
    name[0] = '_';
    changed = true;
  }
  if (changed) name.append("~").append(ShortHash(exact));
  return name;
}

size_t SweepResult::failed() const {
  return static_cast<size_t>(
      std::count_if(points.begin(), points.end(), [](const auto& p) { return !p.ok(); }));
}

}  // namespace dlio
