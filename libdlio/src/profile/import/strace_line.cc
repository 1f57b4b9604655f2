#include "profile/import/strace_line.h"

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <unordered_map>

#include "dlio/profile.h"

namespace dlio::profile_internal {
namespace {

void TrimLeft(std::string_view* s) {
  while (!s->empty() && (s->front() == ' ' || s->front() == '\t')) s->remove_prefix(1);
}
void Trim(std::string_view* s) {
  TrimLeft(s);
  while (!s->empty() && (s->back() == ' ' || s->back() == '\t')) s->remove_suffix(1);
}

bool ParseDigits(std::string_view s, int64_t* out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size() && !s.empty();
}

// "1795502550.158929" -> microseconds.
bool ParseTimestamp(std::string_view s, int64_t* us) {
  const size_t dot = s.find('.');
  if (dot == std::string_view::npos) return false;
  int64_t sec = 0, frac = 0;
  std::string_view f = s.substr(dot + 1);
  if (!ParseDigits(s.substr(0, dot), &sec) || f.empty() || f.size() > 9) return false;
  if (!ParseDigits(f, &frac) || sec < 0 || sec > kMaxTraceMicros / 1000000) return false;
  for (size_t i = f.size(); i < 6; ++i) frac *= 10;
  for (size_t i = 6; i < f.size(); ++i) frac /= 10;
  *us = sec * 1000000 + frac;
  return true;
}

std::string_view NextToken(std::string_view* s) {
  TrimLeft(s);
  size_t n = 0;
  while (n < s->size() && (*s)[n] != ' ' && (*s)[n] != '\t') ++n;
  std::string_view tok = s->substr(0, n);
  s->remove_prefix(n);
  return tok;
}

bool IsCallName(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

// -errno of an errno name ("ENOENT" -> -2), from glibc's own table; 0 when unknown.
int64_t ErrnoOfName(std::string_view name) {
  static const std::unordered_map<std::string_view, int> kByName = [] {
    std::unordered_map<std::string_view, int> m;
    for (int e = 1; e < 512; ++e) {
      const char* n = strerrorname_np(e);
      if (n != nullptr) m.emplace(n, e);
    }
    return m;
  }();
  auto it = kByName.find(name);
  return it == kByName.end() ? 0 : -it->second;
}

}  // namespace

bool ParseStracePrefix(std::string_view line, StraceLine* out, std::string* error) {
  *out = StraceLine();
  std::string_view s = line;
  TrimLeft(&s);
  if (s.empty() || s.substr(0, 7) == "strace:") return true;  // kNoise
  int64_t tid = 0;
  if (s.substr(0, 5) == "[pid ") {
    const size_t close = s.find(']');
    std::string_view num = s.substr(5, close == std::string_view::npos ? 0 : close - 5);
    Trim(&num);
    if (close == std::string_view::npos || !ParseDigits(num, &tid)) {
      *error = "bad [pid N] prefix";
      return false;
    }
    s.remove_prefix(close + 1);
  }
  std::string_view tok = NextToken(&s);
  if (tok.find('.') == std::string_view::npos) {  // a leading pid (strace -f -o)
    if (!ParseDigits(tok, &tid)) {
      *error = "expected a pid or a -ttt timestamp, got '" + std::string(tok) + "'";
      return false;
    }
    tok = NextToken(&s);
  }
  if (!ParseTimestamp(tok, &out->ts_us)) {
    *error = "expected a -ttt timestamp (seconds.microseconds), got '" + std::string(tok) + "'";
    return false;
  }
  out->tid = tid;
  TrimLeft(&s);
  if (s.substr(0, 3) == "+++" || s.substr(0, 3) == "---") return true;  // exits, signals
  if (s.substr(0, 5) == "<... ") {
    const size_t end = s.find(" resumed>");
    if (end == std::string_view::npos) {
      *error = "'<... ' without ' resumed>'";
      return false;
    }
    out->call = s.substr(5, end - 5);
    out->rest = s.substr(end + 9);
    out->type = StraceLine::Type::kResumed;
    return true;
  }
  const size_t paren = s.find('(');
  if (paren == std::string_view::npos || !IsCallName(s.substr(0, paren))) {
    *error = "expected 'call(' after the timestamp";
    return false;
  }
  out->call = s.substr(0, paren);
  out->rest = s.substr(paren + 1);
  constexpr std::string_view kUnfinished = "<unfinished ...>";
  std::string_view r = out->rest;
  Trim(&r);
  if (r.size() >= kUnfinished.size() && r.substr(r.size() - kUnfinished.size()) == kUnfinished) {
    out->rest = out->rest.substr(0, out->rest.rfind(kUnfinished));
    out->type = StraceLine::Type::kUnfinished;
  } else {
    out->type = StraceLine::Type::kCall;
  }
  return true;
}

bool ParseStraceCall(std::string_view s, StraceCall* out, std::string* error) {
  *out = StraceCall();
  int depth = 0;
  bool in_string = false;
  size_t arg_start = 0, i = 0;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if (c == ']' || c == '}') {
      --depth;
    } else if (c == ')') {
      if (depth == 0) break;
      --depth;
    } else if (c == ',' && depth == 0) {
      std::string_view a = s.substr(arg_start, i - arg_start);
      Trim(&a);
      out->args.push_back(a);
      arg_start = i + 1;
    }
  }
  if (i >= s.size()) {
    *error = "no closing ')' of the call";
    return false;
  }
  std::string_view last = s.substr(arg_start, i - arg_start);
  Trim(&last);
  if (!last.empty() || !out->args.empty()) out->args.push_back(last);
  out->raw_args = s.substr(0, i);
  std::string_view tail = s.substr(i + 1);
  TrimLeft(&tail);
  if (tail.empty() || tail.front() != '=') {
    *error = "expected '= result' after the call";
    return false;
  }
  tail.remove_prefix(1);
  std::string_view ret = NextToken(&tail);
  if (ret != "?") {
    out->has_ret = StraceInt(ret, &out->ret);
    if (!out->has_ret) {
      *error = "bad result '" + std::string(ret) + "'";
      return false;
    }
    if (out->ret == -1) {
      // "-1 ENOENT (No such file...)": -errno. An unknown name leaves -1, as does EPERM
      // (errno 1): the model's "unknown" (see ProfileEvent::ret).
      const int64_t err = ErrnoOfName(NextToken(&tail));
      if (err != 0) out->ret = err;
    }
  }
  const size_t lt = tail.rfind('<');
  if (lt != std::string_view::npos && tail.back() == '>') {
    int64_t us = 0;
    if (ParseTimestamp(tail.substr(lt + 1, tail.size() - lt - 2), &us)) out->dur_us = us;
  }
  return true;
}

bool StraceString(std::string_view arg, std::string* out) {
  out->clear();
  if (arg.empty() || arg.front() != '"') return false;
  for (size_t i = 1; i < arg.size(); ++i) {
    const char c = arg[i];
    if (c == '"') return true;
    if (c != '\\' || i + 1 >= arg.size()) {
      out->push_back(c);
      continue;
    }
    const char e = arg[++i];
    if (e == 'n') {
      out->push_back('\n');
    } else if (e == 't') {
      out->push_back('\t');
    } else if (e == 'r') {
      out->push_back('\r');
    } else if (e == 'x' && i + 2 < arg.size()) {
      unsigned v = 0;
      std::from_chars(arg.data() + i + 1, arg.data() + i + 3, v, 16);
      out->push_back(static_cast<char>(v));
      i += 2;
    } else if (e >= '0' && e <= '7') {
      unsigned v = 0;
      size_t n = 0;
      while (n < 3 && i + n < arg.size() && arg[i + n] >= '0' && arg[i + n] <= '7') {
        v = v * 8 + static_cast<unsigned>(arg[i + n] - '0');
        ++n;
      }
      out->push_back(static_cast<char>(v));
      i += n - 1;
    } else {
      out->push_back(e);
    }
  }
  return false;
}

bool StraceInt(std::string_view arg, int64_t* out) {
  if (arg == "AT_FDCWD") {
    *out = -100;
    return true;
  }
  if (arg.substr(0, 2) == "0x") {
    uint64_t v = 0;
    auto [p, ec] = std::from_chars(arg.data() + 2, arg.data() + arg.size(), v, 16);
    if (ec != std::errc() || p != arg.data() + arg.size() || v > INT64_MAX) return false;
    *out = static_cast<int64_t>(v);
    return true;
  }
  const size_t lt = arg.find('<');  // "3</data/x.npz>" under strace -y
  return ParseDigits(lt == std::string_view::npos ? arg : arg.substr(0, lt), out);
}

int64_t StraceIovSize(std::string_view iov, std::string_view iovcnt) {
  int64_t expected = 0, total = 0, seen = 0;
  if (!StraceInt(iovcnt, &expected)) return -1;
  constexpr std::string_view kLen = "iov_len=";
  bool in_string = false;
  for (size_t i = 0; i < iov.size(); ++i) {
    const char c = iov[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (iov.compare(i, kLen.size(), kLen) == 0) {
      i += kLen.size();
      size_t end = i;
      while (end < iov.size() && iov[end] >= '0' && iov[end] <= '9') ++end;
      int64_t n = 0;
      if (!StraceInt(iov.substr(i, end - i), &n) || n > kMaxTraceBytes - total) return -1;
      total += n;
      ++seen;
      i = end - 1;
    }
  }
  return seen == expected ? total : -1;
}

std::string JoinPath(std::string_view dir, std::string_view path) {
  if (path.empty() || (path.front() != '/' && dir.empty())) return std::string(path);
  std::string joined =
      path.front() == '/' ? std::string(path) : std::string(dir) + "/" + std::string(path);
  std::vector<std::string_view> parts;
  std::string_view rest = joined;
  while (!rest.empty()) {
    const size_t slash = rest.find('/');
    const std::string_view part = rest.substr(0, slash);
    rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
      continue;
    }
    parts.push_back(part);
  }
  std::string out;
  for (const auto& part : parts) {
    out += '/';
    out += part;
  }
  return out.empty() ? "/" : out;
}

std::string_view StraceFdPath(std::string_view arg) {
  const size_t lt = arg.find('<');
  if (lt == std::string_view::npos || arg.back() != '>') return {};
  return arg.substr(lt + 1, arg.size() - lt - 2);
}

}  // namespace dlio::profile_internal
