// Splits one line of `strace -f -ttt -T` output into its parts.
#ifndef DLIO_SRC_PROFILE_STRACE_LINE_H_
#define DLIO_SRC_PROFILE_STRACE_LINE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace dlio::profile_internal {

struct StraceLine {
  enum class Type { kCall, kUnfinished, kResumed, kNoise };
  Type type = Type::kNoise;
  int64_t tid = 0;        // 0 when the line has no pid (strace without -f); not narrowed
  int64_t ts_us = 0;      // -ttt timestamp
  std::string_view call;  // "read"
  std::string_view rest;  // kCall: text after "call("; kUnfinished/kResumed: the fragment
};

// Parses the prefix ("[pid N] " or "N ", then the timestamp) and classifies the line. Returns
// false with *error set when the line fits no strace form.
bool ParseStracePrefix(std::string_view line, StraceLine* out, std::string* error);

// The result of a complete call, from the text after "call(": the top-level arguments, the
// return value (-errno for "-1 ENOENT ..."; `has_ret` false for "?") and the duration.
struct StraceCall {
  std::vector<std::string_view> args;
  int64_t ret = -1;
  bool has_ret = false;
  int64_t dur_us = 0;
  std::string_view raw_args;  // the text between the parentheses
};
bool ParseStraceCall(std::string_view after_paren, StraceCall* out, std::string* error);

// Decodes a strace string argument ("..." with C escapes, maybe followed by "...").
// Returns false when `arg` is not a string.
bool StraceString(std::string_view arg, std::string* out);

// Integer argument (decimal, 0x hex, AT_FDCWD = -100, or an fd decorated by -y: "3</path>");
// false for a value beyond int64 (never wrapped).
bool StraceInt(std::string_view arg, int64_t* out);

// The bytes an iovec array argument asks for: the sum of the "iov_len=N" strace prints
// ("[{iov_base=..., iov_len=10}, ...]"), -1 when it printed fewer entries than `iovcnt` says
// (an abbreviated array) or the array at all (a failed call: an address), or when the lengths
// add up past kMaxTraceBytes.
int64_t StraceIovSize(std::string_view iov, std::string_view iovcnt);

// `path` joined to `dir` when relative (dir "" = unknown: path unchanged), "." and ".."
// components and repeated "/" removed lexically.
std::string JoinPath(std::string_view dir, std::string_view path);

// The path of an fd decorated by `strace -y` ("3</data/x>" -> "/data/x"); empty otherwise.
std::string_view StraceFdPath(std::string_view arg);

}  // namespace dlio::profile_internal

#endif  // DLIO_SRC_PROFILE_STRACE_LINE_H_
