// The trace target: part 0 is a trace file (dlio/DFTracer .pfw, gzip .pfw, strace -f -ttt -T,
// darshan-dxt-parser text), written to a fresh temporary file and read by ImportTrace. A trace
// that imports keeps at most kMaxImportWarnings warnings, must analyze (AnalysisJson is JSON,
// AnalysisText is not empty), be identical to itself (CompareTraces similarity 1) and render as
// an HTML report.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "dlio/profile_analysis.h"
#include "dlio/profile_compare.h"
#include "dlio/profile_report.h"
#include "fuzz_targets.h"

namespace dlio::fuzz {
namespace {

// Larger inputs are skipped: they add time per input, not coverage.
constexpr size_t kMaxTraceBytes = 1 << 20;

[[noreturn]] void Violated(const std::string& what) {
  std::fprintf(stderr, "dlio fuzz trace: contract violated: %s\n", what.c_str());
  std::abort();
}

// A fresh temporary file holding `bytes`, removed when this object goes.
class TempTrace {
 public:
  explicit TempTrace(std::string_view bytes) {
    const char* dir = std::getenv("TMPDIR");
    path_ = std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/dlio_fuzz_trace_XXXXXX";
    const int fd = mkstemp(path_.data());
    if (fd < 0) Violated("cannot create a temporary file under " + path_);
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
      if (n <= 0) Violated("cannot write " + path_);
      done += static_cast<size_t>(n);
    }
    close(fd);
  }
  ~TempTrace() { unlink(path_.c_str()); }
  TempTrace(const TempTrace&) = delete;
  TempTrace& operator=(const TempTrace&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace

int FuzzTrace(const std::vector<std::string_view>& parts) {
  if (parts[0].size() > kMaxTraceBytes) return 0;
  const TempTrace file(parts[0]);
  ProfileTrace trace;
  auto imported = ImportTrace(file.path(), &trace);
  const bool verbose = std::getenv("DLIO_FUZZ_VERBOSE") != nullptr;
  if (verbose) std::fprintf(stderr, "  import: %s\n", imported.status().ToString().c_str());
  if (!imported.ok()) return 0;
  if (imported->warnings.size() > kMaxImportWarnings ||
      imported->bad_values < static_cast<int64_t>(imported->warnings.size())) {
    Violated("an import kept more warnings than kMaxImportWarnings, or more than it counted");
  }

  const TraceAnalysis analysis = AnalyzeTrace(trace);
  const std::string json = AnalysisJson(analysis);
  if (!nlohmann::json::accept(json)) Violated("AnalysisJson is not JSON:\n" + json);
  if (AnalysisText(analysis).empty()) Violated("AnalysisText is empty");
  const double similarity = CompareTraces(trace, trace).similarity;
  if (!(std::fabs(similarity - 1) <= 1e-9)) {
    Violated("a trace compared with itself has similarity " + std::to_string(similarity));
  }
  const std::string html = RenderHtmlReport(trace, analysis);
  if (html.empty()) Violated("RenderHtmlReport returned an empty page");
  return 0;
}

}  // namespace dlio::fuzz
