// dataset.keep_files: false: the dataset files a run generated are removed at its end.
#pragma once

#include "dlio/generator.h"
#include "runner/run_context.h"

namespace dlio::runner_internal {

// After a barrier (every rank has finished reading), removes the files `generated` lists (this
// rank's, written by this run) and their companions (Format::CompanionFiles) from ctx.storage.
// Nothing else: files that were present before the run, the marker, the folders and side_io's
// files stay. An entry already gone is skipped; another failure is an error naming the path.
// Collective.
Status RemoveGeneratedFiles(const RunContext& ctx, const GenerateReport& generated);

}  // namespace dlio::runner_internal
