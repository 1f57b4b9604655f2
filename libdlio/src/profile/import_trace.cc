// ImportTrace: picks the importer of a trace file by its content, or imports a trace directory.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "dlio/profile_analysis.h"
#include "profile/line_reader.h"

namespace dlio {
namespace {

namespace fs = std::filesystem;

enum class TraceFormat { kUnknown, kPfw, kDxt, kStrace };

bool IsDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "<sec>.<usec> name(" after an optional "<pid> " or "[pid N] " prefix (strace -f -ttt).
bool IsStraceLine(std::string_view line) {
  if (line.rfind("[pid", 0) == 0) return true;
  size_t sp = line.find(' ');
  if (sp != std::string_view::npos && IsDigits(line.substr(0, sp))) line.remove_prefix(sp + 1);
  while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
  sp = line.find(' ');
  if (sp == std::string_view::npos) return false;
  const std::string_view time = line.substr(0, sp);
  const size_t dot = time.find('.');
  if (dot == std::string_view::npos || !IsDigits(time.substr(0, dot)) ||
      !IsDigits(time.substr(dot + 1))) {
    return false;
  }
  const std::string_view rest = line.substr(sp + 1);
  if (rest.rfind("+++", 0) == 0 || rest.rfind("---", 0) == 0 || rest.rfind("<...", 0) == 0) {
    return true;
  }
  const size_t paren = rest.find('(');
  return paren != std::string_view::npos && paren > 0 &&
         std::all_of(rest.begin(), rest.begin() + static_cast<std::ptrdiff_t>(paren), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
         });
}

TraceFormat Sniff(const std::string& head) {
  if (head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x1f &&
      static_cast<unsigned char>(head[1]) == 0x8b) {
    return TraceFormat::kPfw;
  }
  const size_t first = head.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return TraceFormat::kUnknown;
  // "[pid N] ..." is strace without -o; any other "[" or "{" opens JSON.
  if (head.compare(first, 4, "[pid") != 0 && (head[first] == '[' || head[first] == '{')) {
    return TraceFormat::kPfw;
  }
  // Look at the first lines only: a cut-off last line of `head` is not judged.
  std::string_view rest(head);
  for (int n = 0; n < 64 && !rest.empty(); ++n) {
    const size_t nl = rest.find('\n');
    if (nl == std::string_view::npos && head.size() >= 65536) break;
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    if (line.rfind("# darshan log version", 0) == 0 || line.rfind("# DXT", 0) == 0) {
      return TraceFormat::kDxt;
    }
    if (line.front() == '#') continue;  // other darshan-parser preamble lines
    return IsStraceLine(line) ? TraceFormat::kStrace : TraceFormat::kUnknown;
  }
  return TraceFormat::kUnknown;
}

void AddStats(const ImportStats& s, ImportStats* total) {
  total->lines += s.lines;
  total->events += s.events;
  total->metadata_events += s.metadata_events;
  total->skipped += s.skipped;
  total->truncated_lines += s.truncated_lines;
  total->malformed_metadata += s.malformed_metadata;
  total->bad_values += s.bad_values;
  for (const auto& w : s.warnings) {
    if (total->warnings.size() < kMaxImportWarnings) total->warnings.push_back(w);
  }
}

// Every sum an analysis or a fit computes adds durations, sizes or byte counts of some of the
// trace's events: refused here when those of all of them add up past kMaxTraceTotal, none of
// those sums can overflow. Each term is below 2^63 and the sum is checked after each add, so the
// unsigned sums never wrap.
Status CheckTotals(const std::string& path, const ProfileTrace& t) {
  uint64_t dur = 0, size = 0, ret = 0;
  constexpr auto kMax = static_cast<uint64_t>(kMaxTraceTotal);
  for (size_t i = 0; i < t.size(); ++i) {
    dur += static_cast<uint64_t>(std::max<int64_t>(t.dur_us[i], 0));
    size += static_cast<uint64_t>(std::max<int64_t>(t.size_bytes[i], 0));
    ret += static_cast<uint64_t>(std::max<int64_t>(t.ret[i], 0));
    if (dur > kMax || size > kMax || ret > kMax) {
      return Status::Corruption("trace ", path, ": the durations, sizes or byte counts of its ",
                                "events add up past 2^62 (at event ", i + 1, ")");
    }
  }
  return Status::OK();
}

Result<ImportStats> ImportDirectory(const std::string& dir, ProfileTrace* trace) {
  std::vector<std::string> files;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const bool pfw = name.size() > 4 && name.compare(name.size() - 4, 4, ".pfw") == 0;
    const bool gz = name.size() > 7 && name.compare(name.size() - 7, 7, ".pfw.gz") == 0;
    // Not only regular files: a FIFO or device named like a trace is refused by name when opened
    // (OpenTraceFile), not skipped in silence or waited on. Subdirectories are not traces.
    std::error_code type_ec;
    if ((pfw || gz) && !it->is_directory(type_ec)) files.push_back(it->path().string());
  }
  if (ec) return Status::IOError("cannot list trace directory ", dir, ": ", ec.message());
  if (files.empty()) {
    return Status::NotFound("trace directory ", dir, " holds no *.pfw or *.pfw.gz file");
  }
  std::sort(files.begin(), files.end());
  ImportStats total;
  for (const auto& f : files) {
    DLIO_ASSIGN_OR_RETURN(const ImportStats s, ImportPfw(f, trace));
    AddStats(s, &total);
  }
  DLIO_RETURN_NOT_OK(CheckTotals(dir, *trace));
  return total;
}

// The first 64 KiB of a trace file, which must be a regular file (OpenTraceFile).
Result<std::string> Head(const std::string& path) {
  DLIO_ASSIGN_OR_RETURN(const int fd, profile_internal::OpenTraceFile(path));
  std::string head(65536, '\0');
  size_t got = 0;
  while (got < head.size()) {
    const ssize_t n = ::read(fd, head.data() + got, head.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return Status::FromErrno(err, "read trace " + path);
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  head.resize(got);
  return head;
}

Result<ImportStats> Import(TraceFormat format, const std::string& path, ProfileTrace* trace) {
  switch (format) {
    case TraceFormat::kPfw:
      return ImportPfw(path, trace);
    case TraceFormat::kDxt:
      return ImportDxt(path, trace);
    case TraceFormat::kStrace:
      return ImportStrace(path, trace);
    case TraceFormat::kUnknown:
      break;
  }
  return Status::InvalidArgument(
      "trace ", path,
      ": unknown format (expected a .pfw JSON trace, gzip, darshan-dxt-parser text or strace "
      "-f -ttt -T output)");
}

}  // namespace

Result<ImportStats> ImportTrace(const std::string& path, ProfileTrace* trace) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) return Status::NotFound("trace ", path, " does not exist");
  if (fs::is_directory(st)) return ImportDirectory(path, trace);
  DLIO_ASSIGN_OR_RETURN(const std::string head, Head(path));
  Result<ImportStats> stats = Import(Sniff(head), path, trace);
  if (stats.ok()) DLIO_RETURN_NOT_OK(CheckTotals(path, *trace));
  return stats;
}

}  // namespace dlio
