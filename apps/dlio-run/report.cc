#include "report.h"

#include <filesystem>
#include <fstream>
#include <system_error>

#include "dlio/profile.h"
#include "dlio/profile_analysis.h"
#include "dlio/profile_report.h"
#include "dlio/storage.h"

namespace dlio_run {
namespace {

namespace fs = std::filesystem;

// An existing output is replaced only when dlio wrote it (its first 4 KiB hold the marker).
dlio::Status CheckReplaceable(const std::string& output) {
  std::error_code ec;
  if (!fs::exists(output, ec)) return dlio::Status::OK();
  if (fs::is_directory(output, ec)) {
    return dlio::Status::AlreadyExists("report: -o ", output, " is a directory");
  }
  std::ifstream in(output, std::ios::binary);
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  if (head.find(dlio::kReportGeneratorTag) == std::string::npos) {
    return dlio::Status::AlreadyExists("report: ", output,
                                       " exists and is not a dlio report; not replaced (choose "
                                       "another -o)");
  }
  return dlio::Status::OK();
}

}  // namespace

dlio::Result<ReportCommandResult> Report(const ReportCommandOptions& options) {
  if (options.inputs.empty()) {
    return dlio::Status::InvalidArgument("report: no trace given (dlio-run report TRACE...)");
  }
  if (options.bucket_us < 0) {
    return dlio::Status::InvalidArgument("report: --bucket-us ", options.bucket_us, " is negative");
  }
  DLIO_RETURN_NOT_OK(CheckReplaceable(options.output));
  dlio::ProfileTrace trace;
  dlio::ReportOptions report;
  report.sources = options.inputs;
  for (const auto& input : options.inputs) {
    DLIO_RETURN_NOT_OK(dlio::ImportTrace(input, &trace).status());
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
  auto storage = dlio::NewPosixStorage(dlio::StorageOptions{});
  DLIO_RETURN_NOT_OK(dlio::WriteFileAtomically(storage.get(), options.output, page));
  ReportCommandResult result;
  result.events = static_cast<int64_t>(trace.size());
  result.bytes = static_cast<int64_t>(page.size());
  result.with_run_summary = report.run.has_value();
  return result;
}

}  // namespace dlio_run
