// The training phase: the epoch loop, its evaluations and step- or epoch-cadence checkpoints.
#pragma once

#include <memory>

#include "dlio/checkpointer.h"
#include "dlio/loop.h"
#include "dlio/side_io.h"
#include "runner/checkpoint_phase.h"
#include "runner/run_context.h"

namespace dlio::runner_internal {

// What the training phase builds. The caller owns it beyond the phase: after an error the loops
// must be torn down only once the other ranks were stopped (Comm::Abort), since closing a
// collectively opened MPI file is collective.
struct TrainingParts {
  std::unique_ptr<LoopParts> train, eval;  // eval when the run evaluates
  std::unique_ptr<SideIo> side_io;         // when side_io reads or writes anything
};

// Builds the loops (and side I/O) into `parts`, then runs train.epochs epochs with their
// evaluations; with a checkpointer in `checkpointing` (null: none) it saves at
// checkpoint.steps_between_checkpoints (counting each epoch's steps when it declares DLIO's
// cadence, else the run's) or after the epochs checkpoint.checkpoint_after_epoch /
// epochs_between_checkpoints name. Appends this rank's records to report->epochs, eval_epochs
// and checkpoints. Collective.
Status Train(const RunContext& ctx, const Checkpointing& checkpointing, TrainingParts* parts,
             RunReport* report);

// Whether a checkpoint is saved after training epoch `epoch` (1-based): never with a step
// cadence (checkpoint.steps_between_checkpoints > 0), else from checkpoint_after_epoch on, every
// epochs_between_checkpoints epochs.
bool CheckpointAfterEpoch(const WorkloadConfig& config, uint64_t epoch);

}  // namespace dlio::runner_internal
