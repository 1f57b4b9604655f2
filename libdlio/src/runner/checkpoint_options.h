// What the checkpoint.* and model.* keys ask of a checkpointer, shared by the runner (which builds
// it) and the preflight check (which sizes its checkpoints before the run).
#pragma once

#include <string>

#include "dlio/checkpointer.h"
#include "dlio/config.h"

namespace dlio {

// checkpoint.type with auto resolved: dlio_benchmark (DLIO's files and folders) for a DLIO config
// (framework pytorch or tensorflow); otherwise transformer when the model describes one
// (model.type transformer, model.num_layers, layer_parameters or optimization_groups), else model
// when a model size is set, else paper. The only place the runner names built-in checkpointers:
// `auto` is a default picked from DLIO's config keys (model.type is DLIO's string, not a registry
// name), as LoaderFor picks the pipeline; what the chosen one writes and when is asked of its
// registry entry (CheckpointerCapabilities), whatever its name.
std::string CheckpointTypeFor(const WorkloadConfig& config);

// Everything the config asks of rank `rank` of `world`'s checkpointer (seed included).
CheckpointOptions CheckpointOptionsFor(const WorkloadConfig& config, int rank, int world);

// The transformer the model.* keys describe, split as model.parallelism.* and checkpoint.mode say.
TransformerModel TransformerModelFor(const WorkloadConfig& config);

}  // namespace dlio
