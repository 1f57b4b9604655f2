#include "profile/import/json_cursor.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace dlio::profile_internal {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void AppendUtf8(std::string* out, uint32_t cp) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xc0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xe0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else {
    out->push_back(static_cast<char>(0xf0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  }
}

}  // namespace

bool JsonDeeperThan(std::string_view text, size_t max_depth) {
  size_t depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return true;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return false;
}

bool JsonCursor::Fail(std::string_view what) {
  error_ = std::string(what) + " at column " + std::to_string(column());
  return false;
}

bool JsonCursor::FailExpected(char c) { return Fail(std::string("expected '") + c + "'"); }

// After the opening quote: a string with escapes (or unterminated).
bool JsonCursor::EscapedString(std::string_view* out, std::string* scratch) {
  scratch->clear();
  while (p_ < end_ && *p_ != '"') {
    if (*p_ != '\\') {
      scratch->push_back(*p_++);
      continue;
    }
    if (++p_ >= end_) break;
    const char e = *p_++;
    switch (e) {
      case 'n':
        scratch->push_back('\n');
        break;
      case 't':
        scratch->push_back('\t');
        break;
      case 'r':
        scratch->push_back('\r');
        break;
      case 'b':
        scratch->push_back('\b');
        break;
      case 'f':
        scratch->push_back('\f');
        break;
      case 'u': {
        uint32_t cp = 0;
        for (int k = 0; k < 4; ++k) {
          const int h = p_ < end_ ? HexValue(*p_) : -1;
          if (h < 0) return Fail("bad \\u escape");
          cp = cp * 16 + static_cast<uint32_t>(h);
          ++p_;
        }
        AppendUtf8(scratch, cp);
        break;
      }
      default:
        scratch->push_back(e);
        break;  // \" \\ \/
    }
  }
  if (p_ >= end_) return Fail("unterminated string");
  ++p_;
  *out = *scratch;
  return true;
}

bool JsonCursor::SlowNumber(int64_t* out) {
  SkipSpace();
  const char* begin = p_;
  auto [p, ec] = std::from_chars(begin, end_, *out);
  if (ec != std::errc() || p == begin) return Fail("expected a number");
  if (p < end_ && (*p == '.' || *p == 'e' || *p == 'E')) {
    double d = 0;
    auto [q, ec2] = std::from_chars(begin, end_, d);
    if (ec2 != std::errc()) return Fail("expected a number");
    // 2^63 and beyond (and NaN) do not fit an int64_t: converting them is undefined.
    if (!(std::abs(d) < 9223372036854775808.0)) return Fail("number out of the int64 range");
    *out = static_cast<int64_t>(d);
    p = q;
  }
  p_ = p;
  return true;
}

bool JsonCursor::SkipScalar() {
  if (Peek() == '"') {
    std::string scratch;
    std::string_view sv;
    return String(&sv, &scratch);
  }
  for (std::string_view word : {"true", "false", "null"}) {
    if (static_cast<size_t>(end_ - p_) >= word.size() &&
        std::string_view(p_, word.size()) == word) {
      p_ += word.size();
      return true;
    }
  }
  int64_t ignored = 0;
  return Number(&ignored);
}

bool JsonCursor::SkipKey() {
  std::string scratch;
  std::string_view sv;
  return String(&sv, &scratch) && Expect(':');
}

// An explicit stack of the closing brackets of the open containers instead of recursion: a line
// of 100,000 "[" would otherwise overflow the thread's stack.
bool JsonCursor::SkipValue() {
  std::string closers;
  for (;;) {
    const char c = Peek();
    if (c == '{' || c == '[') {
      if (closers.size() >= kMaxJsonDepth) {
        too_deep_ = true;
        return Fail("JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
      }
      ++p_;
      const char close = c == '{' ? '}' : ']';
      if (!Consume(close)) {
        closers.push_back(close);
        if (c == '{' && !SkipKey()) return false;
        continue;  // the container's first value
      }
    } else if (!SkipScalar()) {
      return false;
    }
    // A value ended: close the containers it ends, up to one that continues with ','.
    for (;;) {
      if (closers.empty()) return true;
      if (Consume(',')) {
        if (closers.back() == '}' && !SkipKey()) return false;
        break;
      }
      if (!Expect(closers.back())) return false;
      closers.pop_back();
    }
  }
}

}  // namespace dlio::profile_internal
