// Importer of `darshan-dxt-parser` text output.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <string>
#include <unordered_map>
#include <vector>

#include "dlio/profile.h"
#include "profile/import/import_check.h"
#include "profile/import/line_reader.h"
#include "profile/import/trace_importer.h"

namespace dlio {
namespace {

using profile_internal::ImportCheck;
using profile_internal::LineReader;

std::vector<std::string_view> Split(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    const size_t start = i;
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

bool ToInt(std::string_view s, int64_t* out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size();
}

// Seconds with a fraction ("0.0029") -> microseconds, rounded.
bool SecondsToMicros(std::string_view s, int64_t* us) {
  double d = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
  if (ec != std::errc() || p != s.data() + s.size()) return false;
  if (!(std::abs(d) * 1e6 <= static_cast<double>(kMaxTraceMicros))) return false;  // also NaN
  *us = std::llround(d * 1e6);
  return true;
}

// Column positions, from the "# Module Rank ..." header.
struct Columns {
  int module = -1, rank = -1, thread = -1, op = -1, offset = -1, length = -1, start = -1, end = -1;
  // Offset is optional: darshan 3.1's DXT_MPIIO sections print no offset column.
  bool Complete() const {
    return module >= 0 && rank >= 0 && op >= 0 && length >= 0 && start >= 0 && end >= 0;
  }
};

Columns ParseHeader(std::string_view header) {
  Columns c;
  const auto names = Split(header.substr(1));
  for (int i = 0; i < static_cast<int>(names.size()); ++i) {
    std::string lower(names[i]);
    for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (lower == "module") c.module = i;
    if (lower == "rank") c.rank = i;
    if (lower.find("thread") != std::string::npos) c.thread = i;
    if (lower == "wt/rd") c.op = i;
    if (lower == "offset") c.offset = i;
    if (lower == "length") c.length = i;
    if (lower == "start(s)") c.start = i;
    if (lower == "end(s)") c.end = i;
  }
  return c;
}

// The value after "<key>: " in a "# DXT, ..." or preamble line, up to "," or the end.
std::string_view ValueAfter(std::string_view line, std::string_view key) {
  const size_t at = line.find(key);
  if (at == std::string_view::npos) return {};
  std::string_view v = line.substr(at + key.size());
  while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
  return v;
}

// "X_POSIX" -> "POSIX", "X_MPIIO" -> "MPIIO" (the analysis counts one layer when both exist;
// these strings are its contract); other modules lose the "X_" prefix too.
std::string_view Category(std::string_view module) {
  if (module.substr(0, 2) == "X_") module.remove_prefix(2);
  return module;
}

class DxtImporter {
 public:
  DxtImporter(std::string path, ProfileTrace* trace)
      : file_(std::move(path)), trace_(trace), check_("DXT text " + file_, &stats_) {}

  Result<ImportStats> Run() {
    LineReader reader;
    DLIO_RETURN_NOT_OK(reader.Open(file_));
    std::string_view line;
    while (reader.Next(&line)) {
      ++stats_.lines;
      DLIO_RETURN_NOT_OK(Handle(line, reader.line_number()));
    }
    DLIO_RETURN_NOT_OK(reader.status());
    return stats_;
  }

 private:
  Status Handle(std::string_view line, int64_t line_no) {
    size_t first = 0;
    while (first < line.size() && std::isspace(static_cast<unsigned char>(line[first]))) ++first;
    line.remove_prefix(first);
    if (line.empty()) return Status::OK();
    if (line.front() == '#') {
      Comment(line);
      return Status::OK();
    }
    if (!columns_.Complete()) {
      return Status::Corruption("DXT text ", file_, " line ", line_no,
                                ": a trace row before a '# Module ... Wt/Rd ...' header");
    }
    return Row(Split(line), line_no);
  }

  void Comment(std::string_view line) {
    if (line.find("Wt/Rd") != std::string_view::npos) {
      columns_ = ParseHeader(line);
    } else if (line.find("file_name:") != std::string_view::npos) {
      file_name_ = std::string(ValueAfter(line, "file_name:"));
    } else if (line.rfind("# start_time:", 0) == 0) {
      // Whole seconds (darshan 3.1-3.3) or seconds.nanoseconds (3.4).
      std::string_view v = ValueAfter(line, "start_time:");
      const size_t end = v.find_first_not_of("0123456789.");
      int64_t us = 0;
      if (SecondsToMicros(v.substr(0, end), &us)) start_us_ = us;
    }
  }

  Status Row(const std::vector<std::string_view>& f, int64_t line_no) {
    const int needed = std::max({columns_.module, columns_.rank, columns_.thread, columns_.op,
                                 columns_.offset, columns_.length, columns_.start, columns_.end});
    auto bad = [&](std::string_view what) {
      return Status::Corruption("DXT text ", file_, " line ", line_no, ": ", what);
    };
    if (static_cast<int>(f.size()) <= needed) return bad("fewer columns than the header names");
    int64_t rank = 0, thread = 0, offset = -1, length = 0, start = 0, end = 0;
    if (!ToInt(f[columns_.rank], &rank)) return bad("bad rank");
    if (columns_.thread >= 0 && !ToInt(f[columns_.thread], &thread)) return bad("bad thread id");
    if (columns_.offset >= 0 && f[columns_.offset] != "N/A" && !ToInt(f[columns_.offset], &offset))
      return bad("bad offset");
    if (!ToInt(f[columns_.length], &length)) return bad("bad length");
    if (!SecondsToMicros(f[columns_.start], &start) || !SecondsToMicros(f[columns_.end], &end)) {
      return bad("bad start or end time");
    }
    const std::string_view op = f[columns_.op];
    if (op != "read" && op != "write") return bad("Wt/Rd is neither read nor write");
    ProfileEvent e;
    // A rank that does not fit 31 bits would wrap onto another one: the row is dropped.
    if (!check_.Id(rank, "rank", line_no, &e.pid, /*lowest=*/0)) return Status::OK();
    e.tid = columns_.thread >= 0 ? Thread(thread) : e.pid;
    e.name = op;
    e.category = Category(f[columns_.module]);
    e.path = file_name_;
    e.start_us = start_us_ + start;
    e.dur_us = end - start;
    e.offset = offset;
    e.size = e.ret = length;
    e.kind = op == "read" ? OpKind::kRead : OpKind::kWrite;
    if (!check_.Event(&e, line_no)) return Status::OK();
    trace_->ranks[e.pid] = e.pid;
    trace_->Add(e);
    ++stats_.events;
    return Status::OK();
  }

  // A thread column value as a tid: kept when it fits 31 bits; a larger one (a pthread_t is an
  // address) is numbered -1, -2, ... in order of appearance, so distinct threads stay distinct.
  int32_t Thread(int64_t thread) {
    if (thread >= 0 && thread <= INT32_MAX) return static_cast<int32_t>(thread);
    auto [it, added] = wide_threads_.try_emplace(thread, 0);
    if (added) it->second = -static_cast<int32_t>(wide_threads_.size());
    return it->second;
  }

  std::string file_;
  ProfileTrace* trace_;
  ImportStats stats_;
  ImportCheck check_;
  std::unordered_map<int64_t, int32_t> wide_threads_;
  Columns columns_;
  std::string file_name_;
  int64_t start_us_ = 0;
};

}  // namespace

namespace profile_internal {

bool SniffDxt(std::string_view head) { return IsDarshanHeader(FirstTextLine(head)); }

}  // namespace profile_internal

Result<ImportStats> ImportDxt(const std::string& path, ProfileTrace* trace) {
  return DxtImporter(path, trace).Run();
}

}  // namespace dlio
