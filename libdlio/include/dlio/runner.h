// The runner: generate a dataset and/or train on it as a DLIO workload describes, on one rank of a
// (serial or MPI) job, then write DLIO's output files. This is what `dlio-run` calls; a training
// code that wants its own loop composes DataSource, Sampler, Pipeline and ComputeEmulator instead.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "dlio/checkpointer.h"
#include "dlio/clock.h"
#include "dlio/comm.h"
#include "dlio/config.h"
#include "dlio/generator.h"
#include "dlio/metrics.h"
#include "dlio/registries.h"
#include "dlio/status.h"
#include "dlio/storage.h"

namespace dlio {

// Where the runner's messages go (the driver wires it to spdlog). Called from the runner's thread.
using LogFn = std::function<void(LogLevel level, const std::string& message)>;

struct RunProgress {
  const char* phase = "";  // "generate", "train", "eval", "checkpoint"
  uint64_t epoch = 0, epochs = 0;
  uint64_t step = 0, steps = 0;  // within the epoch (generate: files done / files)
  uint64_t bytes = 0;            // bytes so far in this phase
  double elapsed_s = 0;
};

struct RunEnv {
  Comm* comm = nullptr;                    // serial when null
  const Registries* registries = nullptr;  // built-ins when null
  const Clock* clock = SystemClock();
  LogFn log;                                         // silent when empty
  std::function<void(const RunProgress&)> progress;  // rank 0 only; throttled by the caller
  // The storage of the dataset, of the checkpoints (unless checkpoint.storage_type names another)
  // and of side_io's files. Not owned; bound to its own clock and tracer. Null: built from the
  // storage.* keys (StorageOptionsFor) on `clock` and the run's tracer. Ranks that run as threads
  // of one process (tests) share one.
  Storage* storage = nullptr;
  // Where output.folder's files (summary.json, config.json, the per-rank files) are written. Not
  // owned. Null: the local file system (posix). The trace files (output.trace) are not written
  // through it.
  Storage* output_storage = nullptr;
  bool force_generate = false;  // generate into a non-empty folder without a marker
  bool write_outputs = true;    // summary.json and per-rank files in output.folder
  // Multi-rank runs: on an error during generation or training, call comm->Abort(status) (MPI:
  // prints the status naming the rank, then MPI_Abort ends every rank) instead of returning, since
  // the other ranks would wait forever in their next collective. Set it to false only when the
  // caller can stop the other ranks itself.
  bool abort_on_error = true;
};

// DLIO's "block": the training steps of an epoch between two step-cadence checkpoints (the whole
// epoch without them), as {rank}_per_epoch_stats.json's "blockN" and {rank}_output.json list it.
struct BlockReport {
  int64_t start_us = 0, end_us = 0;  // wall clock
  size_t first_step = 0, steps = 0;  // EpochReport::steps[first_step, first_step + steps)
  BlockMetrics metrics;              // this rank, over the block's steps and wall time
};

// When one checkpoint save or load ran on this rank: DLIO's "save_ckptN" / "load_ckptN".
struct CheckpointSpan {
  uint64_t block = 1;  // N: the block it ended (training) or its 1-based number (checkpoint-only)
  size_t index = 0;    // into RunReport::checkpoints (saves) or checkpoint_loads, and their *_all
  int64_t start_us = 0, end_us = 0;  // wall clock
};

struct EpochReport {
  uint64_t epoch = 0;  // 1-based, as DLIO prints it
  int64_t start_us = 0, end_us = 0;
  int64_t checkpoint_ns = 0;      // time spent checkpointing inside the epoch (not in the block)
  BlockMetrics metrics;           // this rank
  std::vector<StepRecord> steps;  // this rank
  // Across ranks (equal on every rank after the reduction):
  double au_percent_mean = 0;    // mean over ranks
  double samples_per_s_sum = 0;  // sum over ranks
  double bytes_per_s_sum = 0;    // sum over ranks
  // What this rank's storage counted over the epoch (Storage::TakeEpochStats): named blocks, in
  // the order its layers report them (the tiered storage's "cache", then the s3 storage's "s3").
  // A node's shared cache is reported by the node's first rank only.
  std::vector<StatsBlock> storage_stats;
  std::vector<BlockReport> blocks;    // training epochs: at least one, in order
  std::vector<CheckpointSpan> saves;  // training epochs: the saves during and right after it
};

// One checkpoint save or load across ranks.
struct CheckpointOpSummary {
  uint64_t bytes = 0;  // summed over ranks
  double seconds = 0;  // the slowest rank's duration
};

// MLPerf Storage's reporting rules, evaluated on rank 0 for training runs.
struct StorageRulesCheck {
  bool checked = false;              // a training run: the fields below are set
  uint64_t dataset_bytes = 0;        // num_files_train x num_samples_per_file x record_length_bytes
  uint64_t client_memory_bytes = 0;  // host memory (cgroup limit if lower) summed over hosts
  uint64_t num_hosts = 0;
  bool dataset_ge_5x_memory = false;
  bool mlperf_rules = false;     // metric.mlperf_rules resolved (auto: unet3d/resnet50/cosmoflow)
  uint64_t steps_per_epoch = 0;  // floor(files x samples per file / batch / world), as DLIO
  bool steps_ge_500 = false;
};

struct RunReport {
  std::string workload;
  int rank = 0, world = 1;
  GenerateReport generate;                    // this rank's share
  GenerateReport generate_all;                // rank 0: summed over ranks, duration of the slowest
  std::vector<EpochReport> epochs;            // training epochs
  std::vector<EpochReport> eval_epochs;       // evaluation passes
  std::vector<CheckpointResult> checkpoints;  // this rank's saves
  std::vector<CheckpointResult> checkpoint_loads;  // this rank's checkpoint-only loads
  // A checkpoint-only run (workflow.train false): its span on this rank and its operations.
  int64_t checkpoint_only_start_us = 0, checkpoint_only_end_us = 0;
  std::vector<CheckpointSpan> checkpoint_only_saves, checkpoint_only_loads;
  std::string checkpoint_type;  // the checkpointer used (checkpoint.type auto resolved)
  std::vector<CheckpointOpSummary> checkpoint_saves_all, checkpoint_loads_all;  // across ranks
  StorageRulesCheck storage_rules;
  IoStats io;  // this rank's storage counters
  // Across ranks and epochs:
  double au_mean_percent = 0, au_stdev_percent = 0;
  double throughput_mean_samples_per_s = 0, throughput_stdev_samples_per_s = 0;
  double io_mean_bytes_per_s = 0, io_stdev_bytes_per_s = 0;
  bool au_met = false;
  // The first training epoch apart from the steady state (epochs 2..N), which is what a
  // long-running job sees: epoch 1's AU (mean over ranks), throughput and I/O (sums over ranks),
  // and their means over epochs 2..N (0 with fewer than 2 epochs).
  double first_epoch_au_percent = 0, first_epoch_samples_per_s = 0, first_epoch_bytes_per_s = 0;
  double steady_au_mean_percent = 0, steady_samples_per_s_mean = 0, steady_bytes_per_s_mean = 0;
  // The pipelines' buffers allocated and touched before the first epoch, outside every epoch's
  // timing (LoopParts::prepare_ns, reserved_bytes): this rank's, then after the reduction the
  // slowest rank's seconds and the bytes summed over ranks.
  double buffer_prepare_seconds = 0;
  uint64_t buffer_prepared_bytes = 0;
  // Saves (checkpoint_saves_all): the longest, each timed on its slowest rank (the mean and
  // stdev over saves are in summary.json's save_checkpoint_* metrics).
  double checkpoint_max_duration_s = 0;
  uint64_t checkpoint_bytes_total = 0;  // all ranks, mean over saves
  std::string output_folder;
  std::string summary_json;  // what summary.json holds (rank 0)
  std::string summary_text;  // the human-readable summary (rank 0)
  std::vector<std::string> warnings;
};

// Runs `config` (already validated or not: it is validated here) on this rank. Before it generates
// or reads anything it makes the preflight check (PreflightRun).
Result<RunReport> RunWorkload(const WorkloadConfig& config, const RunEnv& env);

// The checks of dlio/preflight.h for `config` (validated) as RunWorkload would run it (paths
// resolved, scale applied, over env.comm's ranks), each rank measuring its own host. Collective
// over env.comm: every rank returns the same status, the first failing rank's (naming it when the
// world has several). Errors of the config itself (InvalidArgument: an epoch without a step;
// ResourceExhausted: memory or disk; NotFound: dataset.format unknown) come first; dlio-run exits 2
// on them before generating anything.
Status PreflightRun(const WorkloadConfig& config, const RunEnv& env);

}  // namespace dlio
