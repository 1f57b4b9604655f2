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

struct WorkloadConfig;

class Registries {
 public:
  StorageRegistry storages{"storage"};
  // Storages with a variant the ranks of a node share (tiered), by the storage's name: the runner
  // builds its storage through the entry's factory when there is one (dlio/storage.h).
  NodeSharedStorageRegistry node_shared_storages{"node-shared storage"};
  FormatRegistry formats{"format"};  // each entry with its FormatHints
  SamplerRegistry samplers{"sampler"};
  PipelineRegistry pipelines{"pipeline"};
  ComputeRegistry computes{"compute emulator"};
  CheckpointerRegistry checkpointers{"checkpointer"};
};

// Registers every built-in implementation (explicit, so a static link never drops one).
Status RegisterBuiltins(Registries* registries);

// The rules between `config` and the implementations it names, asked of the registered storage
// and format (StorageCapabilities, FormatCapabilities) rather than of their names, so a
// user-registered implementation that declares a capability is accepted like a built-in one:
// storage.mpiio_collective needs a storage declaring collective_reads and a format declaring
// collective_reads, and refuses dataset.metadata_file with a format declaring
// per_sample_metadata_file. InvalidArgument naming the key and the registered names that would do.
// Complements WorkloadConfig::Validate (the rules among keys); RunWorkload calls both.
Status ValidateCapabilities(const WorkloadConfig& config, const Registries& registries);

// dataset.record_length_bytes as the format `config` names declares its records: with
// FormatCapabilities::uint8_records (jpeg, png) and dataset.record_dims set, prod(record_dims)
// bytes whatever dataset.record_element_type says. Parsing derives the size from
// record_element_type (the config module has no registries) and every override derives it
// again, so apply this after the last override and before anything reads the size: RunWorkload
// and PreflightRun do it on their copy; a program composing MakeLoopParts itself calls it.
// Idempotent; nothing changes without record_dims or when the format is not registered.
Status ApplyFormatRecordShapes(WorkloadConfig* config, const Registries& registries);

// Each module registers its built-ins into its own registry, declared in its interface header
// (RegisterBuiltinStorages in dlio/storage.h, RegisterTieredStorage in dlio/cache.h, ...), so only
// builtins, the runner and the apps include this header.

}  // namespace dlio
