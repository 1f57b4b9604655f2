// `dlio-run report TRACE-or-DIR... [-o report.html]`: imports traces (files or trace
// directories such as a `dlio-run profile` or `dlio-run --trace` output), analyzes them and
// writes one self-contained HTML report; a dlio run's output directory with a summary.json adds
// its per-epoch throughput and AU.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dlio/status.h"

namespace dlio_run {

struct ReportCommandOptions {
  std::vector<std::string> inputs;     // trace files or directories, imported into one trace
  std::string output = "report.html";  // replaced only when it is an earlier dlio report
  std::string title;                   // "" -> "dlio I/O profile: <first input>"
  int64_t bucket_us = 0;               // timeline bucket; 0 -> about 100 buckets
};

// What the command did, for its one-line message.
struct ReportCommandResult {
  int64_t events = 0;
  int64_t bytes = 0;  // size of the page written
  bool with_run_summary = false;
};

// Errors: an input that cannot be imported (named), an output that exists and is not a dlio
// report (AlreadyExists), a failed write (the temporary is removed).
dlio::Result<ReportCommandResult> Report(const ReportCommandOptions& options);

}  // namespace dlio_run
