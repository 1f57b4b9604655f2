// `dlio-run report TRACE-or-DIR... [-o report.html]`: imports traces (files or trace
// directories such as a `dlio-run profile` or `dlio-run --trace` output), analyzes them and
// writes one self-contained HTML report; a dlio run's output directory with a summary.json adds
// its per-epoch throughput and AU.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dlio/status.h"

namespace CLI {
class App;
}

namespace dlio_run {

struct ReportCommandOptions {
  std::vector<std::string> inputs;     // trace files or directories, imported into one trace
  std::string output = "report.html";  // replaced only when it is an earlier dlio report
  std::string title;                   // "" -> "dlio I/O profile: <first input>"
  int64_t bucket_us = 0;               // timeline bucket; 0 -> about 100 buckets
};

// The page and what went into it.
struct ReportCommandResult {
  int64_t events = 0;
  bool with_run_summary = false;
  std::string page;
};

// Declares the `report` options on `command` (named and described by main.cc's table), filling
// `options` when parsed.
void DeclareReportOptions(CLI::App* command, ReportCommandOptions* options);

// Runs Report and prints what it wrote. Returns the exit code: 0 written; 2 when an input cannot
// be imported (the message names it); 1 when the page cannot be written.
int RunReport(const ReportCommandOptions& options);

// Imports and analyzes the inputs and renders the page (RunReport writes it). Errors name the
// input that cannot be imported or the summary.json that cannot be read.
dlio::Result<ReportCommandResult> BuildReport(const ReportCommandOptions& options);

}  // namespace dlio_run
