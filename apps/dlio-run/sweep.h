// `dlio-run sweep --vary KEY=v1,v2,... [--vary ...] [--until-au-below X] [run options]`: runs the
// workload once per point of the grid (dlio/sweep.h), each point in its own subfolder of the
// output folder, in this process (under mpiexec every rank takes part in every point), and writes
// sweep.csv, sweep.json, sweep.svg and sweep.html beside them. See docs/sweep.md.
#pragma once

#include <string>
#include <vector>

#include "run_common.h"
#include "subcommand.h"

namespace CLI {
class App;
}

namespace dlio_run {

struct SweepCommandOptions {
  RunFlags run;                   // what to run, as for a single run
  std::vector<std::string> vary;  // "KEY=v1,v2,..." each
  double until_au_below = -1;     // < 0: no search
  bool fail_fast = false;         // stop at the first failed point
  bool replace = false;           // the output folder may hold an earlier sweep's tables
  bool resume = false;            // take over the earlier sweep's completed points (and replace)
  bool data_per_point = false;    // each point its own dataset.data_folder (auto for dataset.*)
};

// Declares the `sweep` options on `command` (named and described by main.cc's table), filling
// `options` when parsed.
void DeclareSweepOptions(CLI::App* command, SweepCommandOptions* options);

// The subcommand's run: refuses run options given before `sweep` (they would be silently ignored),
// then RunSweepCommand with the subcommand's leftover words.
int Sweep(const SweepCommandOptions& options, const Invocation& call);

// Runs the sweep. `extras` are the subcommand's `++workload.a.b=v` overrides. Exit code: 0 when
// every point ran; 1 when a point failed (its error is in the tables) or a table cannot be
// written; 2 for a usage error (bad --vary, a key or value the config refuses, an earlier sweep in
// the output folder without --replace or --resume), found before any point runs.
int RunSweepCommand(const SweepCommandOptions& options, const std::vector<std::string>& extras,
                    int* argc, char*** argv);

}  // namespace dlio_run
