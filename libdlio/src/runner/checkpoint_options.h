// What the checkpoint.* and model.* keys ask of a checkpointer, shared by the runner (which builds
// it) and the preflight check (which sizes its checkpoints before the run).
#pragma once

#include <string>

#include "dlio/checkpointer.h"
#include "dlio/config.h"

namespace dlio {

// checkpoint.type with auto resolved: transformer when the model describes one (model.type
// transformer, model.num_layers, layer_parameters or optimization_groups), else model when a
// model size is set, else paper.
std::string CheckpointTypeFor(const WorkloadConfig& config);

// The transformer the model.* keys describe, split as model.parallelism.* and checkpoint.mode say.
TransformerModel TransformerModelFor(const WorkloadConfig& config);

}  // namespace dlio
