#include "report.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <system_error>

#include "dlio/profile.h"
#include "dlio/profile_analysis.h"
#include "dlio/profile_report.h"
#include "exit_codes.h"
#include "trace_cli.h"

namespace dlio_run {

namespace fs = std::filesystem;

dlio::Result<ReportCommandResult> BuildReport(const ReportCommandOptions& options) {
  if (options.inputs.empty()) {
    return dlio::Status::InvalidArgument("report: no trace given (dlio-run report TRACE...)");
  }
  if (options.bucket_us < 0) {
    return dlio::Status::InvalidArgument("report: --bucket-us ", options.bucket_us, " is negative");
  }
  DLIO_ASSIGN_OR_RETURN(const dlio::ProfileTrace trace, ImportTraces(options.inputs));
  dlio::ReportOptions report;
  report.sources = options.inputs;
  for (const auto& input : options.inputs) {
    const std::string summary = (fs::path(input) / "summary.json").string();
    std::error_code ec;
    if (!report.run && fs::is_directory(input, ec) && fs::exists(summary, ec)) {
      DLIO_ASSIGN_OR_RETURN(dlio::RunSummary run, dlio::ReadRunSummary(summary));
      report.run = std::move(run);
    }
  }
  report.title =
      options.title.empty() ? "dlio I/O profile: " + options.inputs.front() : options.title;
  dlio::AnalysisOptions analysis_options;
  analysis_options.timeline_bucket_us = options.bucket_us;
  const dlio::TraceAnalysis analysis = dlio::AnalyzeTrace(trace, analysis_options);
  const std::string page = dlio::RenderHtmlReport(trace, analysis, report);
  ReportCommandResult result;
  result.events = static_cast<int64_t>(trace.size());
  result.with_run_summary = report.run.has_value();
  result.page = page;
  return result;
}

void DeclareReportOptions(CLI::App* cmd, ReportCommandOptions* options) {
  cmd->add_option("inputs", options->inputs,
                  "trace files (.pfw[.gz], DXT text, strace) or directories of .pfw traces; a "
                  "dlio run's output dir with summary.json adds per-epoch throughput and AU")
      ->required();
  cmd->add_option("-o,--output", options->output,
                  "the HTML file (default report.html; replaces only an earlier report)");
  cmd->add_option("--title", options->title, "page title (default: from the input)");
  cmd->add_option("--bucket-us", options->bucket_us,
                  "timeline bucket in microseconds (default: about 100 buckets)");
}

int RunReport(const ReportCommandOptions& options) {
  auto built = BuildReport(options);
  if (!built.ok()) {
    std::fprintf(stderr, "dlio-run: error: %s\n", built.status().ToString().c_str());
    return kExitBadInput;
  }
  if (auto s = WriteCommandOutput(options.output, built->page, IsReportOutput); !s.ok()) {
    std::fprintf(stderr, "dlio-run: error: %s\n", s.ToString().c_str());
    return kExitWriteError;
  }
  std::printf("%s: report of %lld events (%lld bytes)%s\n", options.output.c_str(),
              static_cast<long long>(built->events), static_cast<long long>(built->page.size()),
              built->with_run_summary ? ", with the run's per-epoch figures" : "");
  return 0;
}

}  // namespace dlio_run
