// Running one workload once: what `dlio-run` (its own command line) and `dlio_benchmark` (DLIO's
// Hydra command line) share once the config is built.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "dlio/config.h"
#include "dlio/registries.h"
#include "dlio/status.h"
#include "run_common.h"

namespace dlio_run {

// Runs `config` (already validated) with the run flags `f` (--comm, --quiet, --force): makes the
// communicator, logs `warnings` on rank 0, preflights, calls `before_run(rank)` when given (rank
// 0 writes Hydra's files there), runs and prints the summary. Returns the exit code: 0, 1 (run
// error) or 2 (the config cannot run here). `registries` must outlive the call.
int RunConfig(const RunFlags& f, const dlio::Registries& registries,
              const dlio::WorkloadConfig& config, const std::vector<std::string>& warnings,
              int* argc, char*** argv,
              const std::function<dlio::Status(int rank)>& before_run = nullptr);

}  // namespace dlio_run
