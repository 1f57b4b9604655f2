// The checkpointer of a run and DLIO's checkpoint-only workflow.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "dlio/checkpointer.h"
#include "dlio/runner.h"
#include "runner/run_context.h"

namespace dlio::runner_internal {

// A run's checkpointer and what it writes through.
struct Checkpointing {
  std::string type;  // checkpoint.type with auto resolved
  // Its entry declares DLIO's cadence and names (CheckpointerCapabilities::dlio_cadence).
  bool dlio_cadence = false;
  // The checkpoints' own storage when checkpoint.storage_type names another backend than the
  // data's (its counters add to the run's); null when they go through RunContext::storage.
  std::unique_ptr<Storage> own_storage;
  std::unique_ptr<Checkpointer> checkpointer;
};

// Builds the checkpointer the config describes into `out` (rank 0 first logs what a transformer
// checkpoint amounts to over the job). Every rank must build it before any rank saves: the first
// id is one past the highest in the folder when it is built.
Status MakeCheckpointing(const RunContext& ctx, Checkpointing* out);

// DLIO's checkpoint-only workflow (workflow.train false, workflow.checkpoint true): builds the
// checkpointer into `ckpt` when checkpoint.num_checkpoints_write or _read is > 0, then saves and
// loads as those keys say, appending this rank's results to report->checkpoints and
// checkpoint_loads and when they ran to checkpoint_only_*. Collective.
Status CheckpointOnly(const RunContext& ctx, Checkpointing* ckpt, RunReport* report);

// Where a resumed run's count goes on from: the resumed checkpoint's global step (its names'
// {step}), and the epochs before the run's first (one past its names' {epoch}: the run goes on in
// the epoch after the one the checkpoint was saved in); 0 each when its names hold none.
struct Resumed {
  int64_t step = 0;
  uint64_t epochs = 0;
};

// checkpoint.resume before training: the newest checkpoint complete on every rank, loaded as a
// resumed run loads it; none: nothing is read (a fresh start, as DeepSpeed's load_checkpoint
// without a `latest` tag). Returns the step and epochs its names hold (checkpoint.folder_name's
// and torch_file_name's {step} and {epoch}), from which the run's counts go on, as a resumed
// framework's do; zeros when nothing was loaded. Collective.
Result<Resumed> ResumeFromNewest(const RunContext& ctx, const Checkpointing& ckpt);

// checkpoint.resume's part of dataset generation: one checkpoint saved into a checkpoint_folder
// that holds no complete one, for the run to resume from: after step
// checkpoint.steps_between_checkpoints (the first save of the step cadence, as an earlier run of
// the job would have saved it; step 1 without a step cadence). Collective.
Status WriteResumeCheckpoint(const RunContext& ctx);

}  // namespace dlio::runner_internal
