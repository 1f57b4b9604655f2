// The generation phase of a run (workflow.generate_data).
#pragma once

#include "dlio/generator.h"
#include "runner/run_context.h"

namespace dlio::runner_internal {

// Writes this rank's share of the dataset (GenerateDataset; `force` as RunEnv::force_generate)
// and, on rank 0, side_io's read file; then a barrier. Collective over ctx.comm. Generation's
// warnings go to ctx.messages.
Result<GenerateReport> Generate(const RunContext& ctx, bool force);

}  // namespace dlio::runner_internal
