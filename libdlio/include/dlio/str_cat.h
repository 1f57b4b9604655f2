// StrCat: builds a message from strings and numbers, so error paths read
// `Status::Corruption(path, ": offset ", offset, " past the end")` instead of chains of
// std::to_string. Integers print in decimal, floating-point values in their shortest round-trip
// form ("0.1", "1e-06"), bools as true/false, a char as itself.
#pragma once

#include <charconv>
#include <string>
#include <string_view>
#include <type_traits>

namespace dlio {
namespace str_cat_internal {

inline void Append(std::string* out, std::string_view s) { out->append(s); }
inline void Append(std::string* out, const char* s) { out->append(s != nullptr ? s : "(null)"); }
inline void Append(std::string* out, char c) { out->push_back(c); }
inline void Append(std::string* out, bool b) { out->append(b ? "true" : "false"); }

template <typename T>
requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool> &&
         !std::is_same_v<T, char>) void Append(std::string* out, T value) {
  char buf[64];
  const auto result = std::to_chars(buf, buf + sizeof buf, value);
  out->append(buf, result.ptr);
}

}  // namespace str_cat_internal

// The concatenation of `parts` (anything convertible to std::string_view, numbers, bools, chars).
template <typename... Args>
std::string StrCat(const Args&... parts) {
  std::string out;
  (str_cat_internal::Append(&out, parts), ...);
  return out;
}

}  // namespace dlio
