// `dlio-run trace-merge OUTPUT INPUT...`: merges per-rank traces into one file, one Perfetto
// process per rank.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace dlio_run {

struct TraceMergeOptions {
  std::string output;               // merged trace (.pfw or .pfw.gz)
  std::vector<std::string> inputs;  // trace-<rank>-of-<ranks>.pfw[.gz] files
};

// Declares the `trace-merge` options on `command`.
void DeclareTraceMergeOptions(CLI::App* command, TraceMergeOptions* options);

// Merges and prints what it merged: 0, or 1 when an input cannot be read or the output written.
int TraceMerge(const TraceMergeOptions& options);

}  // namespace dlio_run
