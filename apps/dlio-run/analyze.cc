#include "analyze.h"

#include <CLI/CLI.hpp>
#include <cstdio>

#include "dlio/profile_analysis.h"
#include "dlio/profile_report.h"
#include "exit_codes.h"
#include "trace_cli.h"

namespace dlio_run {
namespace {

// An earlier `dlio-run analyze` output: AnalysisText's title line or AnalysisJson's format.
bool IsAnalysisOutput(std::string_view head) {
  return head.rfind(dlio::kAnalysisTextTitle, 0) == 0 ||
         head.find("\"dlio-analysis\"") != std::string_view::npos;
}

}  // namespace

void DeclareAnalyzeOptions(CLI::App* cmd, AnalyzeOptions* options) {
  cmd->add_option("traces", options->traces,
                  "trace files or directories (one analysis of all of them; format detected "
                  "by content)")
      ->required();
  cmd->add_flag("--json", options->json, "print JSON with the stable keys of docs/profiling.md");
  cmd->add_option("--timeline-us", options->timeline_us,
                  "timeline bucket width in microseconds (default: about 100 buckets)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("-o,--output", options->output, "write to this file instead of stdout");
}

int Analyze(const AnalyzeOptions& options) {
  auto trace = ImportTraces(options.traces);
  if (!trace.ok()) {
    std::fprintf(stderr, "dlio-run: error: %s\n", trace.status().ToString().c_str());
    return kExitBadTrace;
  }
  dlio::AnalysisOptions analysis_options;
  analysis_options.timeline_bucket_us = options.timeline_us;
  const dlio::TraceAnalysis analysis = dlio::AnalyzeTrace(*trace, analysis_options);
  const std::string text =
      options.json ? dlio::AnalysisJson(analysis) : dlio::AnalysisText(analysis);
  if (options.output.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return std::fflush(stdout) == 0 ? kExitOk : kExitWriteError;
  }
  if (auto s = WriteCommandOutput(options.output, text, IsAnalysisOutput); !s.ok()) {
    std::fprintf(stderr, "dlio-run: error: %s\n", s.ToString().c_str());
    return kExitWriteError;
  }
  return kExitOk;
}

dlio::Status WriteDirectoryAnalysis(const std::string& dir) {
  DLIO_ASSIGN_OR_RETURN(const dlio::ProfileTrace trace, ImportTraces({dir}));
  const dlio::TraceAnalysis analysis = dlio::AnalyzeTrace(trace);
  DLIO_RETURN_NOT_OK(
      WriteCommandOutput(dir + "/analysis.json", dlio::AnalysisJson(analysis), IsAnalysisOutput));
  DLIO_RETURN_NOT_OK(
      WriteCommandOutput(dir + "/analysis.txt", dlio::AnalysisText(analysis), IsAnalysisOutput));
  dlio::ReportOptions report;
  report.title = "dlio I/O profile: " + dir;
  report.sources = {dir};
  return WriteCommandOutput(dir + "/report.html", dlio::RenderHtmlReport(trace, analysis, report),
                            IsReportOutput);
}

}  // namespace dlio_run
