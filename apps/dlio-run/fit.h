// `dlio-run fit TRACE-or-PROFILE-DIR... [-o workload.yaml]`: imports traces into one trace, fits
// a dlio workload to it (dlio/profile_fit.h) and writes it as DLIO YAML with a confidence and a
// reason beside every key.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace dlio_run {

struct FitCommandOptions {
  std::vector<std::string> traces;  // files or directories, imported into one trace
  std::string output;               // "" prints to stdout
  std::string name = "fit";         // the workload's name
  std::string data_folder = "./fit-data";
  std::string checkpoint_folder = "./fit-checkpoints";
  int64_t burst_gap_us = 0;  // 0: chosen from the gaps
  bool no_probe = false;     // do not open the data files (sizes and formats from the trace)
  // Files left out as runtime and launcher I/O: patterns, `default` the built-in list
  // (dlio::ParseFitIgnorePaths).
  std::string ignore_paths = "default";
  bool keep_scratch_files = false;  // fit files created and deleted within the run too
};

// Declares the `fit` options on `command` (named and described by main.cc's table), filling
// `options` when parsed.
void DeclareFitOptions(CLI::App* command, FitCommandOptions* options);

// Runs it: 0 on success, 2 when a trace cannot be imported or fits nothing (the message names
// the file), 1 when the output cannot be written (an existing file that is not an earlier fit
// output is never replaced).
int RunFit(const FitCommandOptions& options);

}  // namespace dlio_run
