// `dlio-run inspect FILE [--format NAME]`: describes a data file as JSON and checks it.
#pragma once

#include <cstdint>
#include <string>

namespace CLI {
class App;
}

namespace dlio_run {

struct InspectOptions {
  std::string path;
  std::string format;  // "" detects it
  uint64_t transfer_size = 0;
  std::string sample_layout = "first_axis";
};

// Declares the `inspect` options on `command`.
void DeclareInspectOptions(CLI::App* command, InspectOptions* options);

// Prints the file's DescribeJson, reading it in a child process so that a reader crashing on a
// corrupt file becomes an error naming it. Exit 0 when it opened and describes no problems; 1
// when it cannot be opened or its "problems" list is not empty (each printed to stderr too); 2
// for an unknown format name.
int Inspect(const InspectOptions& options);

}  // namespace dlio_run
