#include "analyze.h"

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>

#include "dlio/profile_analysis.h"

namespace dlio_run {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitWriteError = 1;
constexpr int kExitBadTrace = 2;

// Writes `text` to `path` through a temporary name in the same directory, then renames.
dlio::Status WriteFileAtomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) return dlio::Status::FromErrno(errno, "create " + tmp);
  const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const int err = errno;
  if (std::fclose(f) != 0 || !written) {
    std::remove(tmp.c_str());
    return dlio::Status::FromErrno(written ? errno : err, "write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int rename_err = errno;
    std::remove(tmp.c_str());
    return dlio::Status::FromErrno(rename_err, "rename " + tmp + " to " + path);
  }
  return dlio::Status::OK();
}

void WarnTruncated(const std::string& path, const dlio::ImportStats& stats) {
  if (stats.truncated_lines > 0) {
    std::fprintf(stderr, "dlio-run: warning: %s: skipped %lld cut-short last line%s\n",
                 path.c_str(), static_cast<long long>(stats.truncated_lines),
                 stats.truncated_lines == 1 ? "" : "s");
  }
}

}  // namespace

CLI::App* AddAnalyzeCommand(CLI::App* app, AnalyzeOptions* options) {
  auto* cmd = app->add_subcommand(
      "analyze",
      "analyze I/O traces (.pfw/.pfw.gz of dlio, DFTracer or `dlio-run profile`, "
      "darshan-dxt-parser text, strace -f -ttt -T logs; a directory: its *.pfw files): times, "
      "bytes, bandwidth, Darshan counters, sizes, access patterns, timeline");
  cmd->add_option("traces", options->traces,
                  "trace files or directories (one analysis of all of them; format detected "
                  "by content)")
      ->required();
  cmd->add_flag("--json", options->json, "print JSON with the stable keys of docs/profiling.md");
  cmd->add_option("--timeline-us", options->timeline_us,
                  "timeline bucket width in microseconds (default: about 100 buckets)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("-o,--output", options->output, "write to this file instead of stdout");
  return cmd;
}

int Analyze(const AnalyzeOptions& options) {
  dlio::ProfileTrace trace;
  for (const auto& path : options.traces) {
    auto stats = dlio::ImportTrace(path, &trace);
    if (!stats.ok()) {
      std::fprintf(stderr, "dlio-run: error: %s\n", stats.status().ToString().c_str());
      return kExitBadTrace;
    }
    WarnTruncated(path, *stats);
  }
  dlio::AnalysisOptions analysis_options;
  analysis_options.timeline_bucket_us = options.timeline_us;
  const dlio::TraceAnalysis analysis = dlio::AnalyzeTrace(trace, analysis_options);
  const std::string text =
      options.json ? dlio::AnalysisJson(analysis) : dlio::AnalysisText(analysis);
  if (options.output.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return std::fflush(stdout) == 0 ? kExitOk : kExitWriteError;
  }
  if (auto s = WriteFileAtomically(options.output, text); !s.ok()) {
    std::fprintf(stderr, "dlio-run: error: %s\n", s.ToString().c_str());
    return kExitWriteError;
  }
  return kExitOk;
}

dlio::Status WriteDirectoryAnalysis(const std::string& dir) {
  dlio::ProfileTrace trace;
  DLIO_ASSIGN_OR_RETURN(const dlio::ImportStats stats, dlio::ImportTrace(dir, &trace));
  WarnTruncated(dir, stats);
  const dlio::TraceAnalysis analysis = dlio::AnalyzeTrace(trace);
  DLIO_RETURN_NOT_OK(WriteFileAtomically(dir + "/analysis.json", dlio::AnalysisJson(analysis)));
  return WriteFileAtomically(dir + "/analysis.txt", dlio::AnalysisText(analysis));
}

}  // namespace dlio_run
