// Which checkpoints a read-only checkpoint run loads: the newest complete ones.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dlio/checkpointer.h"
#include "dlio/comm.h"

namespace dlio::runner_internal {

// The newest `count` checkpoints (ascending ids) that are complete on every rank of `comm`
// (Checkpointer::CompleteIds intersected over ranks, so a checkpoint torn by a killed save is
// skipped); with `oldest`, the first `count` instead (DLIO reads global_epoch1_step1..N).
// NotFound naming checkpoint.num_checkpoints_read and `folder` when fewer exist; an error of any
// rank reaches every rank. Collective.
Result<std::vector<uint64_t>> NewestCompleteCheckpoints(Checkpointer* checkpointer, Comm* comm,
                                                        uint64_t count, const std::string& folder,
                                                        bool oldest = false);

}  // namespace dlio::runner_internal
