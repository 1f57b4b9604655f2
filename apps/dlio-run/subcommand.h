// One row of dlio-run's subcommand table (main.cc): the subcommand's name, its one-line help, a
// setup function declaring its options and a run function called when the command line named it.
// Adding a subcommand is one row there plus its own file.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace dlio_run {

// What main hands a subcommand's run function besides its own options.
struct Invocation {
  CLI::App* root = nullptr;               // dlio-run's app: its own options and leftover words
  CLI::App* command = nullptr;            // the subcommand's app: its leftover words
  std::vector<std::string> after_dashes;  // what TakeProfileCommand took after `--`
  int* argc = nullptr;                    // main's, for MPI_Init in runs that start MPI
  char*** argv = nullptr;
};

using SubcommandRun = std::function<int(const Invocation& call)>;

struct SubcommandRow {
  const char* name;
  const char* help;
  // Declares the options on `command` (already named and described) and returns what runs when
  // the command line names it.
  std::function<SubcommandRun(CLI::App* command)> declare;
};

// A row whose `setup` fills an Options the parse writes into and whose `run` takes it.
template <typename Options>
SubcommandRow Row(const char* name, const char* help, void (*setup)(CLI::App*, Options*),
                  int (*run)(const Options&, const Invocation&)) {
  return {name, help, [setup, run](CLI::App* command) -> SubcommandRun {
            auto options = std::make_shared<Options>();
            setup(command, options.get());
            return [options, run](const Invocation& call) { return run(*options, call); };
          }};
}

// The same for a run that needs only its options.
template <typename Options>
SubcommandRow Row(const char* name, const char* help, void (*setup)(CLI::App*, Options*),
                  int (*run)(const Options&)) {
  return {name, help, [setup, run](CLI::App* command) -> SubcommandRun {
            auto options = std::make_shared<Options>();
            setup(command, options.get());
            return [options, run](const Invocation&) { return run(*options); };
          }};
}

}  // namespace dlio_run
