#include "compare.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "dlio/profile_analysis.h"
#include "dlio/profile_compare.h"

namespace dlio_run {
namespace {

namespace fs = std::filesystem;

constexpr int kExitOk = 0;
constexpr int kExitWriteError = 1;
constexpr int kExitBadInput = 2;

int Fail(const std::string& message, int code) {
  std::fprintf(stderr, "dlio-run: error: compare: %s\n", message.c_str());
  return code;
}

dlio::Result<dlio::ProfileTrace> Load(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return dlio::Status::NotFound(path + ": no such file or directory");
  dlio::ProfileTrace trace;
  auto stats = dlio::ImportTrace(path, &trace);
  if (!stats.ok()) {
    const std::string message = stats.status().ToString();
    // The importers name the file (or line) they failed on; a status that does not is prefixed.
    if (message.find(path) != std::string::npos) return stats.status();
    return dlio::Status::InvalidArgument(path + ": " + message);
  }
  if (stats->truncated_lines > 0) {
    std::fprintf(stderr, "dlio-run: warning: %s: skipped %lld truncated last line%s\n",
                 path.c_str(), static_cast<long long>(stats->truncated_lines),
                 stats->truncated_lines == 1 ? "" : "s");
  }
  return trace;
}

// Whether an existing file is an earlier output of this command (which may be replaced); any
// other file is the user's and is never overwritten.
bool IsCompareOutput(const std::string& path) {
  std::ifstream in(path);
  std::string first;
  std::getline(in, first);
  if (first.rfind("A: ", 0) == 0) return true;
  std::string second;
  std::getline(in, second);
  return first == "{" && second.rfind("  \"a\": {\"label\": ", 0) == 0;
}

// Writes through a temporary name and a rename, so a reader never sees half a file.
int WriteOutput(const std::string& path, const std::string& text) {
  std::error_code ec;
  if (fs::exists(path, ec) && !IsCompareOutput(path)) {
    return Fail(path + " exists and is not an output of dlio-run compare; not replaced",
                kExitWriteError);
  }
  const std::string tmp = path + ".tmp-" + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) {
      fs::remove(tmp, ec);
      return Fail("cannot write " + tmp, kExitWriteError);
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return Fail("cannot rename " + tmp + " to " + path + ": " + ec.message(), kExitWriteError);
  }
  return kExitOk;
}

}  // namespace

int Compare(const CompareOptions& options) {
  auto a = Load(options.a);
  if (!a.ok()) return Fail(a.status().ToString(), kExitBadInput);
  auto b = Load(options.b);
  if (!b.ok()) return Fail(b.status().ToString(), kExitBadInput);
  dlio::TraceComparison c = dlio::CompareTraces(*a, *b);
  c.label_a = options.a;
  c.label_b = options.b;
  for (const auto& [label, reads] : {std::pair{options.a, c.reads_a}, {options.b, c.reads_b}}) {
    if (reads == 0) std::fprintf(stderr, "dlio-run: warning: %s has no reads\n", label.c_str());
  }
  const std::string text = options.json ? dlio::ComparisonJson(c) : dlio::ComparisonText(c);
  if (options.output.empty()) {
    std::fputs(text.c_str(), stdout);
    return kExitOk;
  }
  return WriteOutput(options.output, text);
}

}  // namespace dlio_run
