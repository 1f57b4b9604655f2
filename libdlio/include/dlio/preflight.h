// Preflight: whether a run can work on this machine, checked before anything is generated or read.
//
// The key table rejects values that are absurd on their own (ranges, docs/configuration.md). What
// depends on the machine is checked here, from the config and a description of the host:
//  - every epoch has at least one step (a rank's share of the samples is at least one batch);
//  - the memory one rank's plans, metadata and buffers need, times the ranks sharing its host,
//    fits the host's memory (EstimateRunFootprint lists what is counted);
//  - a generation's missing files fit the free space of the data folder's file system, and the
//    run's checkpoints fit that of the checkpoint folder.
// CheckRunFits is pure (tests give it made-up hosts); MeasureHostResources measures this host;
// RunWorkload and dlio-run do both (PreflightRun, dlio/runner.h) before generating.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dlio/comm.h"
#include "dlio/config.h"
#include "dlio/format.h"
#include "dlio/pipeline.h"
#include "dlio/status.h"

namespace dlio {

class Registries;

// "Not measured": the check that needs the value is skipped.
inline constexpr uint64_t kUnknownBytes = UINT64_MAX;

// One checkpoint of a run as its checkpointer's registry entry declares it
// (CheckpointerCapabilities), in plain values: CheckpointPlanFor asks the entry.
struct CheckpointPlan {
  uint64_t bytes = 0;  // over all ranks, before checkpoint.size_divisor (0: not sized, e.g. paper)
  std::string size_keys;      // the keys that size it ("": checkpoint/model.model_size_bytes)
  bool dlio_cadence = false;  // step checkpoints count each epoch's steps (DLIO's cadence)
};

// What the checkpointer `config` names (checkpoint.type, auto resolved) declares for a run of
// `world` ranks, asked of its entry in `registries`: the sum over the ranks of
// CheckpointerCapabilities::rank_bytes (0 when a rank's plan fails: the checkpointer names the
// problem when it is built), its size_keys and dlio_cadence. A name not registered, or an entry
// declaring none of them, gives the defaults (not sized; step checkpoints count the run's steps).
CheckpointPlan CheckpointPlanFor(const WorkloadConfig& config, int world,
                                 const Registries& registries);

struct HostResources {
  uint64_t memory_bytes = 0;   // memory of the host (0 = unknown: memory is not checked)
  uint64_t ranks_on_host = 1;  // ranks of the job sharing that memory
  // Free bytes of the file system that holds dataset.data_folder (checked only when generating)
  // and the dataset's files already there (a generation skips them).
  uint64_t data_free_bytes = kUnknownBytes;
  uint64_t train_files_present = 0, eval_files_present = 0;
  uint64_t checkpoint_free_bytes = kUnknownBytes;  // of checkpoint.checkpoint_folder's file system
  // The dataset's storage keeps its files in the process's memory
  // (StorageCapabilities::in_process_memory: memory, or slow over it): they count as memory.
  bool dataset_in_memory = false;
  // The format's readers stream samples (FormatCapabilities::streams_samples: a pipeline
  // declaring worker_processes bounds its read buffers, BoundedReadBytesFor), and the storage
  // needs MPI (the pytorch loader under auto then runs threaded, PipelineNameFor).
  bool streaming_format = false;
  bool storage_needs_mpi = false;
  // What reader.pipeline's registry entry declares (PipelineCapabilitiesFor): holds_dataset
  // (preload) counts the preloaded samples as memory, as reader.read_type memory does;
  // overlaps_io (threaded) lets reader.data_loader pytorch run its worker processes (LoaderFor).
  PipelineCapabilities pipeline;
  // The registry the run builds its pipeline from (not owned; it must outlive the check):
  // the entry of the pipeline the runner builds (PipelineNameFor) counts its own batch buffers
  // when it has PipelineHooks::estimate_memory (pytorch: its workers). nullptr, or no such hook:
  // the runner's pool of (prefetch_size + read threads + 1) batches is counted.
  const PipelineRegistry* pipelines = nullptr;
  // With workflow.checkpoint: the run's checkpoint as its checkpointer declares it for the world
  // the check is given, CheckpointPlanFor with the registries the caller has (PreflightRun passes
  // the run's). Left as is: not sized, and step checkpoints count the run's steps.
  CheckpointPlan checkpoint;
};

// One part of a rank's memory: what it is, the keys that size it, and its bytes.
struct FootprintItem {
  std::string what;  // "sample plan"
  std::string keys;  // "dataset.num_files_train x dataset.num_samples_per_file / 4 ranks"
  uint64_t bytes = 0;
};

struct RunFootprint {
  // Per rank, in this order when they apply: file list (dataset.num_files_*), sample plans (the
  // rank's samples of an epoch, as planned and as copied to the pipeline), batch buffers
  // ((prefetch_size + read threads + 1) batches of record_length_bytes), preloaded samples
  // (pipeline preload), the dataset in memory storage, per-step records of every epoch, a
  // generated file's sample sizes and the checkpoint transfer buffer. Sizes are means: records
  // of record_length_bytes_stdev > 0 vary. A lower bound of what the run allocates.
  std::vector<FootprintItem> memory;
  uint64_t memory_bytes = 0;           // their sum (saturating)
  uint64_t file_bytes = 0;             // payload of one data file: samples per file x record length
  uint64_t checkpoint_bytes = 0;       // one checkpoint over all ranks (0: not sized, e.g. paper)
  std::string checkpoint_keys;         // the keys that size it (CheckpointPlan::size_keys)
  uint64_t checkpoints = 0;            // checkpoints the run writes
  uint64_t train_steps_per_epoch = 0;  // steps every rank takes (the runner's rule)
  uint64_t eval_steps = 0;             // steps of one evaluation (0 without evaluation)
};

// What `config` (validated; scaled and resolved as RunWorkload runs it) needs on each rank of a
// world of `world` ranks. Pure and allocation-light whatever the counts (saturating arithmetic).
// `host`'s dataset_in_memory counts the rank's share of the dataset; its pipeline, pipelines,
// streaming_format and storage_needs_mpi decide what the loader holds, its checkpoint sizes the
// checkpoints and their step cadence (its memory and ranks are not used here).
RunFootprint EstimateRunFootprint(const WorkloadConfig& config, int world,
                                  const HostResources& host = {});

// OK when the run fits `host`. InvalidArgument naming reader.batch_size (or batch_size_eval) and
// the dataset keys when an epoch would have no step; ResourceExhausted naming the keys of the
// largest part when the memory of the ranks on the host exceeds its memory, when the missing
// files of a generation (workflow.generate_data) exceed the free space of the data folder, or
// when the checkpoints exceed that of the checkpoint folder. Unknown values skip their check.
Status CheckRunFits(const WorkloadConfig& config, int world, const HostResources& host);

// Measures this host for `config` (validated, scaled, resolved): memory (physical, or the cgroup
// limit when lower); with `comm`, the ranks on this host (collective: every rank must call it);
// for a generation into a local file system (a storage of `registries` declaring
// StorageCapabilities::host_files: posix, stdio, mpiio, or slow over one) with a `format` whose
// files hold exactly their payload (not compressed), the free space of dataset.data_folder and,
// only when the whole dataset would not fit, the dataset files already present; for checkpoints
// on such a file system, the free space of checkpoint_folder. What cannot be measured stays
// unknown. The pipelines are those of `registries` (HostResources::pipelines), which must outlive
// the result's use.
Result<HostResources> MeasureHostResources(const WorkloadConfig& config, const Format* format,
                                           Comm* comm, const Registries& registries);

}  // namespace dlio
