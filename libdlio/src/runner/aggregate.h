// The cross-rank reductions at the end of a run: AU, throughput, I/O and checkpoint summaries.
#pragma once

#include "dlio/comm.h"
#include "dlio/config.h"
#include "dlio/runner.h"

namespace dlio::runner_internal {

// Fills the report's across-ranks fields from this rank's epochs and checkpoints (the epochs'
// cross-rank values were reduced by the epoch loop). Collective over `comm`.
Status Aggregate(const WorkloadConfig& config, Comm* comm, RunReport* report);

}  // namespace dlio::runner_internal
