// A minimal forward-only JSON scanner for one trace line: strings, integers (or decimals,
// truncated), nested values skipped. Much faster than a DOM parser for flat trace events.
#ifndef DLIO_SRC_PROFILE_JSON_CURSOR_H_
#define DLIO_SRC_PROFILE_JSON_CURSOR_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace dlio::profile_internal {

// How deeply SkipValue follows nested arrays and objects (a trace event nests two or three
// levels): deeper input is an error, not a walk without bound.
inline constexpr size_t kMaxJsonDepth = 512;

// Whether JSON `text` nests arrays and objects deeper than `max_depth` anywhere (brackets inside
// strings do not count; the text need not be valid): a check in O(1) memory before a parser that
// keeps state per level (nlohmann's) sees a hostile file.
bool JsonDeeperThan(std::string_view text, size_t max_depth);

// Requires external synchronization. Every method returns false on malformed input; error()
// then says what was expected and at which column. The common cases (no escapes, integers) are
// inline: importers call them several times per line.
class JsonCursor {
 public:
  explicit JsonCursor(std::string_view text)
      : begin_(text.data()), p_(text.data()), end_(text.data() + text.size()) {}

  void SkipSpace() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\r' || *p_ == '\n')) ++p_;
  }
  bool AtEnd() {
    SkipSpace();
    return p_ >= end_;
  }
  // Consumes `c` after optional whitespace.
  bool Expect(char c) { return Consume(c) || FailExpected(c); }
  // Consumes `c` if it is next (after whitespace); returns whether it did.
  bool Consume(char c) {
    SkipSpace();
    if (p_ < end_ && *p_ == c) {
      ++p_;
      return true;
    }
    return false;
  }
  char Peek() {
    SkipSpace();
    return p_ < end_ ? *p_ : '\0';
  }
  // A string; *out views the text (no escapes) or *scratch (escapes decoded).
  bool String(std::string_view* out, std::string* scratch) {
    if (!Expect('"')) return false;
    const char* q = p_;
    while (q < end_ && *q != '"' && *q != '\\') ++q;  // short strings: a loop beats memchr
    if (q < end_ && *q == '"') {
      *out = std::string_view(p_, q - p_);
      p_ = q + 1;
      return true;
    }
    return EscapedString(out, scratch);
  }
  // A number; decimals and exponents are truncated toward zero.
  bool Number(int64_t* out) {
    SkipSpace();
    const char* q = p_;
    const bool negative = q < end_ && *q == '-';
    if (negative) ++q;
    const char* digits = q;
    uint64_t v = 0;
    while (q < end_ && static_cast<unsigned>(*q - '0') < 10 && q - digits < 18) {
      v = v * 10 + static_cast<unsigned>(*q - '0');
      ++q;
    }
    if (q == digits || (q < end_ && (static_cast<unsigned>(*q - '0') < 10 || *q == '.' ||
                                     *q == 'e' || *q == 'E'))) {
      return SlowNumber(out);  // no digits (an error), 19+ digits, decimals, exponents
    }
    *out = negative ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
    p_ = q;
    return true;
  }
  // Any value, skipped, without recursion; nested deeper than kMaxJsonDepth fails (too_deep()).
  bool SkipValue();
  size_t column() const { return static_cast<size_t>(p_ - begin_) + 1; }
  const std::string& error() const { return error_; }
  // Whether the error is a value nested deeper than kMaxJsonDepth (not a cut-short line).
  bool too_deep() const { return too_deep_; }

 private:
  bool Fail(std::string_view what);
  bool FailExpected(char c);
  bool EscapedString(std::string_view* out, std::string* scratch);
  bool SlowNumber(int64_t* out);
  bool SkipScalar();
  // After '{' or ',' in an object: the key and its ':'.
  bool SkipKey();

  const char* begin_;
  const char* p_;
  const char* end_;
  std::string error_;
  bool too_deep_ = false;
};

}  // namespace dlio::profile_internal

#endif  // DLIO_SRC_PROFILE_JSON_CURSOR_H_
