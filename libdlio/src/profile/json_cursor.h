// A minimal forward-only JSON scanner for one trace line: strings, integers (or decimals,
// truncated), nested values skipped. Much faster than a DOM parser for flat trace events.
#ifndef DLIO_SRC_PROFILE_JSON_CURSOR_H_
#define DLIO_SRC_PROFILE_JSON_CURSOR_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace dlio::profile_internal {

// Requires external synchronization. Every method returns false on malformed input; error()
// then says what was expected and at which column.
class JsonCursor {
 public:
  explicit JsonCursor(std::string_view text) : s_(text) {}

  void SkipSpace();
  bool AtEnd() {
    SkipSpace();
    return i_ >= s_.size();
  }
  // Consumes `c` after optional whitespace.
  bool Expect(char c);
  // Consumes `c` if it is next (after whitespace); returns whether it did.
  bool Consume(char c);
  char Peek() {
    SkipSpace();
    return i_ < s_.size() ? s_[i_] : '\0';
  }
  // A string; *out views the text (no escapes) or *scratch (escapes decoded).
  bool String(std::string_view* out, std::string* scratch);
  // A number; decimals and exponents are truncated toward zero.
  bool Number(int64_t* out);
  // Any value, skipped.
  bool SkipValue();
  size_t column() const { return i_ + 1; }
  const std::string& error() const { return error_; }

 private:
  bool Fail(std::string_view what);

  std::string_view s_;
  size_t i_ = 0;
  std::string error_;
};

}  // namespace dlio::profile_internal

#endif  // DLIO_SRC_PROFILE_JSON_CURSOR_H_
