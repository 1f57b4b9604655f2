// What running a workload shares between `dlio-run` (one run) and `dlio-run sweep` (one run per
// grid point): the run options, the config they build, the logger, the progress line and the
// RunEnv wired to them.
#pragma once

#include <spdlog/spdlog.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dlio/config.h"
#include "dlio/registries.h"
#include "dlio/runner.h"
#include "dlio/status.h"
#include "exit_codes.h"

namespace CLI {
class App;
}

namespace dlio_run {

// The options that say what to run and where (the top-level command's and the sweep's).
struct RunFlags {
  std::string config_file;
  std::string workload;
  std::vector<std::string> sets;
  bool generate = false;
  bool no_train = false;
  bool no_generate = false;
  std::string output;
  bool trace = false;
  bool force = false;
  std::string log_level;
  bool quiet = false;
  std::string comm = "auto";
  // summary.json and the per-rank files (dlio_benchmark: not for a generate-only run, as DLIO).
  bool write_outputs = true;
};

// Declares --config, --workload, --set, --generate, --no-generate, --no-train, --output, --trace,
// --force, --log-level, --quiet and --comm on `app`, filling `flags`.
void AddRunOptions(CLI::App* app, RunFlags* flags);

// The extra arguments as overrides (`++workload.a.b=v` or `a.b=v`); InvalidArgument naming the
// first that is neither.
dlio::Result<std::vector<std::string>> OverridesFrom(const std::vector<std::string>& extras);

// The name Fail prints ("dlio-run" unless set; dlio_benchmark sets its own). Call it first in main.
void SetProgramName(const char* name);

// Prints "<program>: error: <status>" to stderr and returns `code`.
int Fail(const dlio::Status& status, int code);

// The workload: the config file or preset, then `overrides`, the --set values, then `last` (a
// sweep point's values), then the flags (--output, --trace, ...); validated, capabilities checked.
dlio::Result<dlio::WorkloadConfig> BuildConfig(const RunFlags& f,
                                               const std::vector<std::string>& overrides,
                                               const dlio::Registries& registries,
                                               std::vector<std::string>* warnings,
                                               const std::vector<std::string>& last = {});

// Whether a preflight error is about the config (exit 2) rather than the run's machinery (1).
bool IsConfigError(const dlio::Status& status);

// The communicator to make for `config`: --comm, except that auto becomes mpi when the storage
// needs MPI (mpiio) and MPI is built in.
std::string CommNameFor(const RunFlags& f, const dlio::WorkloadConfig& config,
                        const dlio::Registries& registries);

// Console (stderr) plus, when `log_file` is not empty, that file. Multi-rank runs: every line
// names its rank, and ranks other than 0 print only warnings and errors.
std::shared_ptr<spdlog::logger> MakeLogger(const std::string& log_file, bool quiet, int rank = 0,
                                           int world = 1);

spdlog::level::level_enum SpdlogLevel(dlio::LogLevel level);

// A run's logger: MakeLogger with rank 0's output.folder/output.log_file (the folder created) at
// output.log_level.
std::shared_ptr<spdlog::logger> MakeRunLogger(const dlio::WorkloadConfig& config, bool quiet,
                                              int rank, int world);

// A single progress line, redrawn in place on a terminal at most ~10 times a second.
class ProgressLine {
 public:
  explicit ProgressLine(bool enabled) : enabled_(enabled) {}
  ~ProgressLine() { Finish(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  void Update(const dlio::RunProgress& p);
  void Finish();

 private:
  bool enabled_;
  bool drawn_ = false;
  int64_t last_ns_ = 0;
};

// The RunEnv's log and progress callbacks: messages to `logger` (clearing the progress line
// first), progress to `progress`. Both must outlive the run.
void WireRunEnv(spdlog::logger* logger, ProgressLine* progress, dlio::RunEnv* env);

}  // namespace dlio_run
