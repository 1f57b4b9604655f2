// `dlio-run list [KIND]`: the registered workloads, formats, storages, ... or the config keys.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace dlio_run {

struct ListOptions {
  std::string kind;       // "" or "all": every kind but keys
  bool markdown = false;  // keys: docs/configuration.md's "Keys" reference instead of columns
};

// Declares the `list` options on `command`.
void DeclareListOptions(CLI::App* command, ListOptions* options);

// Prints the kind asked for: 0, or 2 for an unknown kind (the message names the known ones) or
// --markdown with a kind other than keys.
int List(const ListOptions& options);

}  // namespace dlio_run
