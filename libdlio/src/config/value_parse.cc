#include "config/value_parse.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "config/config_table.h"  // Trim

namespace dlio::config_internal {
namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// The multiplier of a size unit, 0 when unknown.
uint64_t UnitMultiplier(const std::string& unit) {
  const std::string u = Lower(unit);
  if (u == "b") return 1;
  if (u == "kb") return 1000ull;
  if (u == "mb") return 1000ull * 1000;
  if (u == "gb") return 1000ull * 1000 * 1000;
  if (u == "tb") return 1000ull * 1000 * 1000 * 1000;
  if (u == "kib") return 1ull << 10;
  if (u == "mib") return 1ull << 20;
  if (u == "gib") return 1ull << 30;
  if (u == "tib") return 1ull << 40;
  return 0;
}

// A non-negative double to uint64 when integral (or rounding is allowed) and in range.
bool DoubleToUint(double v, bool round_fraction, uint64_t* out) {
  if (!std::isfinite(v) || v < 0 || v >= 18446744073709551616.0) return false;
  double r = std::round(v);
  if (r != v && !round_fraction) return false;
  if (r >= 18446744073709551616.0) return false;
  *out = static_cast<uint64_t>(r);
  return true;
}

}  // namespace

bool ParseBoolText(const std::string& raw, bool* out) {
  const std::string t = Lower(Trim(raw));
  if (t == "true" || t == "yes" || t == "on" || t == "y" || t == "1") {
    *out = true;
    return true;
  }
  if (t == "false" || t == "no" || t == "off" || t == "n" || t == "0") {
    *out = false;
    return true;
  }
  return false;
}

bool ParseDoubleText(const std::string& raw, double* out) {
  const std::string t = Trim(raw);
  if (t.empty()) return false;
  char* end = nullptr;
  double v = std::strtod(t.c_str(), &end);
  if (end != t.c_str() + t.size() || !std::isfinite(v)) return false;
  // strtod also takes hex floats and "infinity"; a config value has neither.
  if (t.find_first_of("xXnN") != std::string::npos) return false;
  *out = v;
  return true;
}

bool ParseUintText(const std::string& raw, bool allow_units, bool round_fraction, uint64_t* out) {
  std::string t = Trim(raw);
  if (t.empty() || t[0] == '-') return false;
  if (t[0] == '+') t.erase(0, 1);
  if (t.empty()) return false;
  if (std::all_of(t.begin(), t.end(), [](unsigned char c) { return std::isdigit(c); })) {
    uint64_t v = 0;
    auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc() || p != t.data() + t.size()) return false;
    *out = v;
    return true;
  }
  double d = 0;
  if (ParseDoubleText(t, &d)) return DoubleToUint(d, round_fraction, out);
  if (!allow_units) return false;
  // "<number>[ ]<unit>"
  size_t unit_start = t.size();
  while (unit_start > 0 && std::isalpha(static_cast<unsigned char>(t[unit_start - 1]))) {
    --unit_start;
  }
  uint64_t mult = UnitMultiplier(t.substr(unit_start));
  if (mult == 0 || unit_start == 0) return false;
  std::string number = Trim(t.substr(0, unit_start));
  if (!ParseDoubleText(number, &d) || d < 0) return false;
  // Sizes with units are rounded to whole bytes ("1.5KB" is 1500, "0.1KiB" is 102).
  return DoubleToUint(d * static_cast<double>(mult), /*round_fraction=*/true, out);
}

bool ParseIntText(const std::string& raw, int64_t* out) {
  std::string t = Trim(raw);
  if (t.empty()) return false;
  std::string digits = (t[0] == '+') ? t.substr(1) : t;
  int64_t v = 0;
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec == std::errc() && p == digits.data() + digits.size() && !digits.empty()) {
    *out = v;
    return true;
  }
  double d = 0;
  if (!ParseDoubleText(t, &d) || std::round(d) != d || std::fabs(d) >= 9.2e18) return false;
  *out = static_cast<int64_t>(d);
  return true;
}

}  // namespace dlio::config_internal
