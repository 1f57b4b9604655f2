// checkpoint.type torch_save's files per checkpoint: one torch.save file per name of
// checkpoint.torch_file_name, each the zip of its group of checkpoint.torch_state_dict with its
// data.pkl size (checkpoint.torch_pickle_bytes) — a flat state dict's, or a nested container's
// such as DeepSpeed's model states and optimizer states files.
#pragma once

#include <vector>

#include "checkpoint/checkpoint_layout.h"
#include "dlio/checkpointer.h"

namespace dlio::checkpoint_internal {

// The files, in the order they are written, with their sizes and state dicts. InvalidArgument
// naming the key: a bad name (a '/', '.dlio...', no {rank} when all ranks write, a bad {id} or
// {step} placeholder: folder_name.h), a bad state
// dict, group counts that do not match the names, a data.pkl size smaller than the state dict's
// own pickle.
Result<std::vector<PlannedFile>> PlanTorchSaveFiles(const CheckpointOptions& options);

}  // namespace dlio::checkpoint_internal
