// `dlio-run analyze TRACE... [--json] [--timeline-us N] [-o FILE]`: imports traces (any format
// ImportTrace knows, or trace directories) into one trace and prints its analysis.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dlio/status.h"

namespace CLI {
class App;
}

namespace dlio_run {

struct AnalyzeOptions {
  std::vector<std::string> traces;  // files or directories, imported into one trace
  bool json = false;                // JSON (stable keys) instead of text
  int64_t timeline_us = 0;          // timeline bucket width; 0: about 100 buckets
  std::string output;               // "" prints to stdout
};

// Declares the `analyze` options on `command` (named and described by main.cc's table), filling
// `options` when parsed.
void DeclareAnalyzeOptions(CLI::App* command, AnalyzeOptions* options);

// Runs it: 0 on success, 2 when a trace cannot be imported (the message names the file), 1 when
// the output cannot be written.
int Analyze(const AnalyzeOptions& options);

// What `dlio-run profile` does after the program ends: analyzes the traces in `dir` into
// dir/analysis.json and dir/analysis.txt (each written under a temporary name, then renamed).
dlio::Status WriteDirectoryAnalysis(const std::string& dir);

}  // namespace dlio_run
