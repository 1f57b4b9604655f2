// MLPerf Storage's rules for a valid training result, checked before training.
#pragma once

#include "dlio/runner.h"
#include "runner/run_context.h"

namespace dlio::runner_internal {

// The dataset is at least 5x the clients' memory (else the page cache serves the reads) and an
// epoch has at least 500 steps. Collective over ctx.comm (each rank reports its host's memory);
// the check is made on rank 0, which warns through ctx.messages; other ranks get an unchecked
// result.
Result<StorageRulesCheck> CheckStorageRules(const RunContext& ctx);

}  // namespace dlio::runner_internal
