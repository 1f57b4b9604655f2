// Every registry of pluggable kinds, in one object the caller owns and passes to what builds
// implementations (RunEnv, LoopEnv, MakeStorage, ...): no global registry.
#pragma once

#include "dlio/checkpointer.h"
#include "dlio/compute.h"
#include "dlio/format.h"
#include "dlio/pipeline.h"
#include "dlio/registry.h"
#include "dlio/sampler.h"
#include "dlio/storage.h"

namespace dlio {

class Registries {
 public:
  Registry<StorageFactory> storages{"storage"};
  Registry<FormatFactory> formats{"format"};
  Registry<SamplerFactory> samplers{"sampler"};
  Registry<PipelineFactory> pipelines{"pipeline"};
  Registry<ComputeFactory> computes{"compute emulator"};
  Registry<CheckpointerFactory> checkpointers{"checkpointer"};
};

// Registers every built-in implementation (explicit, so a static link never drops one).
Status RegisterBuiltins(Registries* registries);

// Per-module registration, called by RegisterBuiltins.
Status RegisterBuiltinStorages(Registries* registries);
Status RegisterBuiltinFormats(Registries* registries);
Status RegisterBuiltinSamplers(Registries* registries);
Status RegisterBuiltinPipelines(Registries* registries);
Status RegisterBuiltinComputes(Registries* registries);
Status RegisterBuiltinCheckpointers(Registries* registries);

}  // namespace dlio
