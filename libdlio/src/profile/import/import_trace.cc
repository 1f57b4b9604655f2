// ImportTrace: picks the importer of a trace file by its content (the rows of TraceImporters), or
// imports a trace directory.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "dlio/profile_analysis.h"
#include "dlio/str_cat.h"
#include "profile/import/line_reader.h"
#include "profile/import/trace_importer.h"

namespace dlio {
namespace profile_internal {

bool IsDarshanHeader(std::string_view line) {
  return line.rfind("# darshan log version", 0) == 0 || line.rfind("# DXT", 0) == 0;
}

std::string_view FirstTextLine(std::string_view head) {
  std::string_view rest = head;
  for (int n = 0; n < 64 && !rest.empty(); ++n) {
    const size_t nl = rest.find('\n');
    if (nl == std::string_view::npos && head.size() >= kTraceHeadBytes) break;
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    if (line.front() == '#' && !IsDarshanHeader(line)) continue;  // other parser preamble lines
    return line;
  }
  return {};
}

namespace {

constexpr TraceImporter kImporters[] = {
    {"pfw", "a .pfw JSON trace, gzip", &SniffPfw, &ImportPfw},
    {"dxt", "darshan-dxt-parser text", &SniffDxt, &ImportDxt},
    {"strace", "strace -f -ttt -T output", &SniffStrace, &ImportStrace},
};

}  // namespace

std::span<const TraceImporter> TraceImporters() { return kImporters; }

}  // namespace profile_internal

namespace {

namespace fs = std::filesystem;
using profile_internal::kTraceHeadBytes;
using profile_internal::TraceImporter;
using profile_internal::TraceImporters;

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

// The first kTraceHeadBytes of a trace file, which must be a regular file (OpenTraceFile).
Result<std::string> Head(const std::string& path) {
  DLIO_ASSIGN_OR_RETURN(const int fd, profile_internal::OpenTraceFile(path));
  std::string head(kTraceHeadBytes, '\0');
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

// The importer of the first row whose sniff accepts `head`.
Result<ImportStats> Import(const std::string& head, const std::string& path, ProfileTrace* trace) {
  std::string expected;
  const std::span<const TraceImporter> rows = TraceImporters();
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].sniff(head)) return rows[i].import(path, trace);
    expected += StrCat(i == 0 ? "" : i + 1 == rows.size() ? " or " : ", ", rows[i].description);
  }
  return Status::InvalidArgument("trace ", path, ": unknown format (expected ", expected, ")");
}

}  // namespace

Result<ImportStats> ImportTrace(const std::string& path, ProfileTrace* trace) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) return Status::NotFound("trace ", path, " does not exist");
  if (fs::is_directory(st)) return ImportDirectory(path, trace);
  DLIO_ASSIGN_OR_RETURN(const std::string head, Head(path));
  Result<ImportStats> stats = Import(head, path, trace);
  if (stats.ok()) DLIO_RETURN_NOT_OK(CheckTotals(path, *trace));
  return stats;
}

}  // namespace dlio
