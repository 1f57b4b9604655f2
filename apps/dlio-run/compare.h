// `dlio-run compare A B [--json] [-o FILE] [--ignore-paths P] [--keep-scratch-files]`: how alike
// the I/O of two runs is (the DLIO paper's similarity, KS distances and a per-feature table;
// dlio/profile_compare.h), scored on the workload's I/O: each trace without the runtime's and
// launchers' files, as fit leaves them out (WithoutRuntimeIo).
#pragma once

#include <string>

#include "dlio/status.h"

namespace CLI {
class App;
}

namespace dlio_run {

struct CompareOptions {
  std::string a, b;    // trace files or directories of traces (dlio-run profile / --trace output)
  bool json = false;   // JSON instead of the text table
  std::string output;  // "" prints to stdout
  std::string ignore_paths = "default";  // ParseFitIgnorePaths' syntax; "" scores every file
  bool keep_scratch_files = false;       // score files created and deleted within the run too
};

// Declares the `compare` options on `command` (named and described by main.cc's table), filling
// `options` when parsed.
void DeclareCompareOptions(CLI::App* command, CompareOptions* options);

// Returns the exit code: 0 compared; 2 when A or B cannot be read as a trace (the message names
// the file); 1 when the output cannot be written. Prints errors to stderr.
int Compare(const CompareOptions& options);

}  // namespace dlio_run
