#include "config/config_table.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "config/key_builders.h"
#include "core/element_type.h"

namespace dlio::config_internal {
namespace {

// --- DLIO spellings mapped onto dlio's --------------------------------------------------

std::string CheckpointTypeSetter(WorkloadConfig& c, const std::string& value, std::string* note) {
  // DLIO's checkpoint.type is where checkpoints are written from (CheckpointLocationType);
  // dlio's is which checkpointer writes them, so the DLIO values set rank_mode instead.
  if (value == "rank_zero") {
    c.checkpoint.rank_mode = CheckpointRankMode::kRoot;
  } else if (value == "all_ranks" || value == "independent") {
    c.checkpoint.rank_mode = CheckpointRankMode::kAll;
  } else {
    return value;
  }
  *note = "checkpoint.type '" + value + "' (DLIO checkpoint location) sets checkpoint.rank_mode '" +
          std::string(EnumName(c.checkpoint.rank_mode)) + "'; checkpoint.type stays '" +
          c.checkpoint.type + "'";
  return c.checkpoint.type;
}

std::string LogLevelSetter(WorkloadConfig&, const std::string& value, std::string*) {
  std::string lower = value;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  if (lower == "warning") return "warn";
  if (lower == "critical") return "error";
  return lower;
}

// The top level and the model section.
void AddModelKeys(std::vector<KeySpec>* t) {
  auto add = [t](KeySpec k) { t->push_back(std::move(k)); };

  // Top level.
  add(String("name", DLIO_FIELD(std::string, name),
             "run name used in outputs: a preset's name or the YAML file's stem"));
  add(String("framework", DLIO_FIELD(std::string, framework),
             "framework being emulated: tensorflow, pytorch, dlio; with checkpoint.type auto, "
             "tensorflow and pytorch select DLIO's checkpoint layout (dlio_benchmark)"));
  add(Double("scale", DLIO_FIELD(double, scale), {0, HUGE_VAL, /*min_exclusive=*/true},
             "factor (> 0) on the counts named in scale_keys, applied to the final config when a "
             "run starts: round(value x scale), at least 1 (dataset.num_files_*: at least one per "
             "rank); sizes are never scaled (see docs/workloads.md)"));
  add(String("scale_keys", DLIO_FIELD(std::string, scale_keys),
             "comma-separated integer keys that scale multiplies (counts: files, samples per "
             "file, steps, epochs, cadences)"));

  // model
  add(String("model.name", DLIO_FIELD(std::string, model.name),
             "model name (informational); `model: <name>` as a scalar sets it too"));
  add(String("model.type", DLIO_FIELD(std::string, model.type),
             "model type: cnn, transformer, ... (with checkpoint.type auto, transformer selects "
             "the transformer checkpointer; in DLIO's layout any other type adds "
             "model_states-<rank>)"));
  add(Uint("model.model_size_bytes", DLIO_FIELD(uint64_t, model.model_size_bytes), {0, kPiB},
           "bytes of model state; checkpoints of type 'model' write this many bytes when "
           "checkpoint.model_size_bytes is 0",
           kSizeUnits));
  add(Alias("model.model_size", "model.model_size_bytes"));
  add(Enum("model.model_datatype", DLIO_ENUM_FIELD(Datatype, model.model_datatype),
           "transformer checkpoints: datatype of the weights (2 bytes for fp16/bf16, 4 for fp32, "
           "8 for fp64, 1 for int8/uint8)"));
  add(Enum("model.optimizer_datatype", DLIO_ENUM_FIELD(Datatype, model.optimizer_datatype),
           "transformer checkpoints: datatype of the optimizer state"));
  add(Int("model.num_layers", DLIO_FIELD(int64_t, model.num_layers), {-1, 1 << 14},
          "transformer layers; > 0 makes checkpoints layered (DLIO's transformer checkpoint: "
          "embedding, num_layers layers, lm_head, final norm) and checkpoint.type auto picks "
          "'transformer' (-1 = not layered)"));
  add(UintList("model.optimization_groups",
               DLIO_FIELD(std::vector<uint64_t>, model.optimization_groups),
               "older DLIO configs: optimizer state given directly; each checkpointing rank writes "
               "3 x sum(groups) bytes (DLIO's int8 tensors a, b per group plus a combined one) "
               "instead of the computed optimizer state"));
  add(UintList("model.layer_parameters", DLIO_FIELD(std::vector<uint64_t>, model.layer_parameters),
               "older DLIO configs: parameters per tensor of every layer; each layer of the rank's "
               "pipeline stage writes sum(p / parallelism.tensor) bytes (int8) instead of the "
               "computed transformer layer"));
  add(Uint("model.parallelism.tensor", DLIO_FIELD(uint64_t, model.parallelism.tensor), {1, 1 << 20},
           "tensor-parallel degree: splits every layer's matrices (not its norms)"));
  add(Uint("model.parallelism.pipeline", DLIO_FIELD(uint64_t, model.parallelism.pipeline),
           {1, 1 << 20},
           "pipeline stages: layers are split over stages; stage 0 also holds the embedding, "
           "the last stage the lm_head and final norm"));
  add(Int("model.parallelism.data", DLIO_FIELD(int64_t, model.parallelism.data), {1, INT32_MAX},
          "data-parallel degree of the emulated job for checkpoint.mode subset; in default mode "
          "it is world / (tensor x pipeline) and a different value here only warns (-1 = derive)",
          kMinusOneOff));
  add(Uint("model.parallelism.zero_stage", DLIO_FIELD(uint64_t, model.parallelism.zero_stage),
           {0, 3},
           "DeepSpeed ZeRO stage 0-3: 0 = only the first tensor x pipeline ranks checkpoint; "
           "1 and 2 = optimizer sharded over data-parallel ranks, model written by data-parallel "
           "rank 0; 3 = model and optimizer sharded over data-parallel ranks"));
  add(Uint("model.transformer.vocab_size", DLIO_FIELD(uint64_t, model.transformer.vocab_size),
           {0, k4Gi}, "vocabulary size (embedding and lm_head are vocab_size x hidden_size)"));
  add(Uint("model.transformer.hidden_size", DLIO_FIELD(uint64_t, model.transformer.hidden_size),
           {0, 1 << 18}, "hidden size"));
  add(Uint("model.transformer.ffn_hidden_size",
           DLIO_FIELD(uint64_t, model.transformer.ffn_hidden_size), {0, 1 << 20},
           "feed-forward hidden size (gated: the up projection is 2 x ffn_hidden_size wide)"));
  add(Uint("model.transformer.num_attention_heads",
           DLIO_FIELD(uint64_t, model.transformer.num_attention_heads), {0, 1 << 16},
           "attention heads (head size = hidden_size / num_attention_heads, rounded down)"));
  add(Uint("model.transformer.num_kv_heads", DLIO_FIELD(uint64_t, model.transformer.num_kv_heads),
           {0, 1 << 16},
           "key/value heads (grouped-query attention: K and V are num_kv_heads x head size wide)"));
}

// What runs: workflow, train and evaluation.
void AddRunKeys(std::vector<KeySpec>* t) {
  auto add = [t](KeySpec k) { t->push_back(std::move(k)); };

  // workflow
  add(Bool("workflow.generate_data", DLIO_FIELD(bool, workflow.generate_data),
           "generate the dataset before training"));
  add(Bool("workflow.train", DLIO_FIELD(bool, workflow.train), "run the training loop"));
  add(Bool("workflow.checkpoint", DLIO_FIELD(bool, workflow.checkpoint),
           "write checkpoints at the checkpoint.* cadence"));
  add(Bool("workflow.evaluation", DLIO_FIELD(bool, workflow.evaluation),
           "run evaluation at the evaluation.* cadence"));
  add(Bool("workflow.profiling", DLIO_FIELD(bool, workflow.profiling),
           "record an I/O trace (same as output.trace)"));
  add(Unused("workflow.debug", "DLIO: debug switch (in bert_v100.yaml; DLIO ignores it too)"));
  add(Unused("workflow.do_eval", "in DLIO's dlrm.yaml; DLIO ignores it (use workflow.evaluation)"));

  // train
  add(Uint("train.epochs", DLIO_FIELD(uint64_t, train.epochs), {1, UINT64_MAX}, "training epochs"));
  add(Dist("train.computation_time", DLIO_FIELD(DistributionSpec, train.computation_time),
           "emulated compute seconds per step (number or distribution)"));
  add(DistStdev("train.computation_time_stdev",
                DLIO_FIELD(DistributionSpec, train.computation_time), "train.computation_time"));
  add(Choice("train.compute_emulator", DLIO_FIELD(std::string, train.compute), {"sleep", "spin"},
             "how compute time is taken: sleep, or spin (busy-wait, CPU-training emulation)"));
  add(Int("train.total_training_steps", DLIO_FIELD(int64_t, train.total_training_steps),
          {1, INT64_MAX}, "stop after this many steps (-1 = whole epochs)", kMinusOneOff));
  add(Uint("train.seed", DLIO_FIELD(uint64_t, train.seed),
           "seed of every random choice (shuffles, sizes, distributions)"));
  add(Bool("train.seed_change_epoch", DLIO_FIELD(bool, train.seed_change_epoch),
           "derive a different shuffle per epoch"));
  add(Uint("train.excluded_start_steps", DLIO_FIELD(uint64_t, train.excluded_start_steps),
           "warm-up steps per block left out of AU and throughput"));
  add(Bool("train.barrier_per_step", DLIO_FIELD(bool, train.barrier_per_step),
           "barrier across ranks after each step (all-reduce stand-in)"));
  add(Uint("train.accelerators_per_process", DLIO_FIELD(uint64_t, train.accelerators_per_process),
           {1, 4096},
           "accelerators one process emulates, as training threads that are ranks of their own "
           "(world = processes x this)"));
  add(Enum("train.barrier_wait", DLIO_ENUM_FIELD(BarrierWait, train.barrier_wait),
           "how a process waits in the MPI step barrier: sleep (nonblocking barrier polled with "
           "short sleeps, frees oversubscribed cores) or spin (MPI_Barrier)"));
  add(Unused("train.total_eval_steps", "in DLIO's dlrm.yaml; DLIO ignores it"));

  // evaluation
  add(Dist("evaluation.eval_time", DLIO_FIELD(DistributionSpec, evaluation.eval_time),
           "emulated seconds per evaluation step (number or distribution)"));
  add(DistStdev("evaluation.eval_time_stdev", DLIO_FIELD(DistributionSpec, evaluation.eval_time),
                "evaluation.eval_time"));
  add(Uint("evaluation.epochs_between_evals", DLIO_FIELD(uint64_t, evaluation.epochs_between_evals),
           "evaluate every this many epochs"));
  add(Uint("evaluation.eval_after_epoch", DLIO_FIELD(uint64_t, evaluation.eval_after_epoch),
           "first epoch after which to evaluate"));
  add(Unused("evaluation.steps_between_evals", "in DLIO's dlrm.yaml; DLIO ignores it"));
}

// The checkpoint section.
void AddCheckpointKeys(std::vector<KeySpec>* t) {
  auto add = [t](KeySpec k) { t->push_back(std::move(k)); };

  // checkpoint
  add(String("checkpoint.checkpoint_folder", DLIO_FIELD(std::string, checkpoint.checkpoint_folder),
             "where checkpoints are written (trailing '/' removed)", kStripSlash | kNonEmpty));
  add(String("checkpoint.type", DLIO_FIELD(std::string, checkpoint.type),
             "checkpointer registry name: paper (five files: 2 x 1 KiB, 4 KiB, 64 KiB, 4 MiB), "
             "model (model_size_bytes), transformer (DLIO's layered LLM checkpoint from model.*), "
             "torch_save (the file and write requests of torch.save for "
             "checkpoint.torch_state_dict), h5py_save (the HDF5 file and write requests of "
             "h5py / Keras save_weights for checkpoint.h5py_datasets), dlio_benchmark (DLIO's "
             "global_epoch<e>_step<s> "
             "folders and files for framework pytorch / tensorflow), or auto: dlio_benchmark when "
             "framework is pytorch or tensorflow, else transformer when model.type is transformer "
             "or model.num_layers, layer_parameters or optimization_groups are set, else model "
             "when a model size is set, else paper. DLIO's location values rank_zero / all_ranks "
             "/ independent set checkpoint.rank_mode instead",
             kNonEmpty, CheckpointTypeSetter));
  add(Uint("checkpoint.checkpoint_after_epoch",
           DLIO_FIELD(uint64_t, checkpoint.checkpoint_after_epoch),
           "first epoch after which to checkpoint"));
  add(Uint("checkpoint.epochs_between_checkpoints",
           DLIO_FIELD(uint64_t, checkpoint.epochs_between_checkpoints),
           "checkpoint every this many epochs (when steps_between_checkpoints is -1)"));
  add(Int("checkpoint.steps_between_checkpoints",
          DLIO_FIELD(int64_t, checkpoint.steps_between_checkpoints), {1, INT64_MAX},
          "checkpoint every this many steps (-1 = use epochs_between_checkpoints)", kMinusOneOff));
  add(Uint("checkpoint.model_size_bytes", DLIO_FIELD(uint64_t, checkpoint.model_size_bytes),
           {0, kPiB}, "bytes per checkpoint for type 'model' (0 = model.model_size_bytes)",
           kSizeUnits));
  add(Alias("checkpoint.model_size", "checkpoint.model_size_bytes"));
  add(Bool("checkpoint.fsync", DLIO_FIELD(bool, checkpoint.fsync),
           "fsync every checkpoint file and its folder"));
  add(Bool(
      "checkpoint.read_back", DLIO_FIELD(bool, checkpoint.read_back),
      "read each checkpoint back after writing it (type torch_save: with torch.load's requests)"));
  add(String("checkpoint.tag_file", DLIO_FIELD(std::string, checkpoint.tag_file),
             "a file in checkpoint_folder that rank 0 rewrites after each save with the "
             "checkpoint folder's name (one write) and that a load reads first, as DeepSpeed "
             "keeps `latest`; empty = none (dlio-run fit sets it from a small file every save "
             "rewrites)"));
  add(String("checkpoint.folder_name", DLIO_FIELD(std::string, checkpoint.folder_name),
             "the name of each checkpoint's folder in checkpoint_folder: text with {id} (the "
             "checkpoint's id: one past the highest already there, then counting up), {step} "
             "(the global step the save follows: this run's steps plus those of the checkpoint "
             "it resumed from) and/or {epoch} (the epoch the save happens in, from 0 as "
             "Lightning counts; a resumed run's go on after the resumed checkpoint's), each at "
             "most once, maybe zero-padded as {step:08}; e.g. DeepSpeed's global_step{step}, "
             "Hugging Face's checkpoint-{step}; '.' = no folder per save, each save's files side "
             "by side in checkpoint_folder (type torch_save, whose torch_file_name must then "
             "hold {id}, {step} or {epoch}: torch.save(sd, f'ckpt/model-{step}.pt'), "
             "Lightning's ModelCheckpoint, epoch={epoch}-step={step}.ckpt; or type h5py_save, "
             "whose one h5py_file_name every save rewrites, as Keras' save_weights('w.h5') each "
             "epoch). Not for type "
             "dlio_benchmark, whose folders are DLIO's global_epoch<e>_step<s> (dlio-run fit "
             "sets it from the traced folders)",
             kNonEmpty));
  add(Bool("checkpoint.resume", DLIO_FIELD(bool, checkpoint.resume),
           "before training, every rank loads the newest checkpoint complete on all ranks in "
           "checkpoint_folder, as a resumed run does (type torch_save: with torch.load's "
           "requests; none there: a fresh start, nothing read); dataset generation writes one "
           "into a folder that has none, the checkpoint the run then resumes from"));
  add(Uint(
      "checkpoint.transfer_size", DLIO_FIELD(uint64_t, checkpoint.transfer_size), {1, kGiB},
      "bytes per checkpoint write/read request (not type torch_save: its requests are torch.save's "
      "and torch.load's)",
      kSizeUnits));
  add(Enum("checkpoint.rank_mode", DLIO_ENUM_FIELD(CheckpointRankMode, checkpoint.rank_mode),
           "all: every rank writes its share; root: only rank 0 writes"));
  add(Int("checkpoint.num_checkpoints_write", DLIO_FIELD(int64_t, checkpoint.num_checkpoints_write),
          {-1, 1 << 20},
          "checkpoint-only runs (workflow.train false, workflow.checkpoint true): write this many "
          "checkpoints (-1 or 0 = none)"));
  add(Int("checkpoint.num_checkpoints_read", DLIO_FIELD(int64_t, checkpoint.num_checkpoints_read),
          {-1, 1 << 20},
          "checkpoint-only runs: then read this many back, the first ones this run wrote, or with "
          "no writes the newest complete ones already in checkpoint_folder (-1 or 0 = none)"));
  add(Enum("checkpoint.mode", DLIO_ENUM_FIELD(CheckpointMode, checkpoint.mode),
           "default: the run's ranks are the whole job (data-parallel degree = world / (tensor x "
           "pipeline)); subset: they are the first ranks of a job of model.parallelism.data x "
           "tensor x pipeline ranks and write those ranks' shares"));
  add(Double("checkpoint.time_between_checkpoints",
             DLIO_FIELD(double, checkpoint.time_between_checkpoints), {-HUGE_VAL, kMaxSeconds},
             "checkpoint-only runs: seconds of emulated compute (train.compute_emulator) before "
             "each save and each load, outside the timing (<= 0 = none)"));
  add(Bool("checkpoint.rank_sync", DLIO_FIELD(bool, checkpoint.rank_sync),
           "checkpoint-only runs: a barrier after each save/load, inside its timing"));
  add(Uint("checkpoint.size_divisor", DLIO_FIELD(uint64_t, checkpoint.size_divisor),
           {1, UINT64_MAX},
           "divide every checkpoint file's size by this (rounded up, at least 1 byte), to run "
           "large checkpoint workloads (llama3_*) small; the file count and layout do not change"));
  AddModelCheckpointKeys(t);  // checkpoint.model_files (checkpoint/model_checkpoint_keys.cc)
  add(String("checkpoint.storage_type", DLIO_FIELD(std::string, checkpoint.storage_type),
             "storage registry name checkpoints are written through, e.g. stdio (fwrite, traced "
             "as STDIO); empty = storage.storage_type"));
}

// The checkpoint section's torch_save and h5py_save keys, then DLIO's keys it accepts (after the
// others, in the table's order).
void AddCheckpointTorchSaveKeys(std::vector<KeySpec>* t) {
  auto add = [t](KeySpec k) { t->push_back(std::move(k)); };
  AddTorchSaveKeys(t);  // checkpoint.torch_* (checkpoint/torch_save_keys.cc)
  AddH5pySaveKeys(t);   // checkpoint.h5py_* (checkpoint/h5py_save_keys.cc)
  add(Unused("checkpoint.checkpoint_mechanism_classname", "DLIO: custom checkpoint class"));
  add(Unused("checkpoint.checkpoint_mechanism",
             "DLIO: checkpoint mechanism name (pt_adls_save, ...)"));
  add(Unused("checkpoint.checkpoint_daos_pool", "DLIO: DAOS pool of checkpoints"));
  add(Unused("checkpoint.checkpoint_daos_cont", "DLIO: DAOS container of checkpoints"));
  add(Unused("checkpoint.num_checkpoints", "in DLIO's llama_1t.yaml; DLIO ignores it"));
  add(Unused("checkpoint.recovery_after_steps", "in DLIO's llama_1t.yaml; DLIO ignores it"));
  add(Unused("checkpoint.recovery_rank_shift", "DLIO: shift ranks when reading back"));
  add(Unused("checkpoint.randomize_tensor", "DLIO: random tensor contents"));
  add(Unused("checkpoint.ksm", "DLIO: kernel same-page merging map"));
  add(Alias("checkpoint.optimization_groups", "model.optimization_groups"));
  add(Alias("checkpoint.num_layers", "model.num_layers"));
  add(Alias("checkpoint.layer_parameters", "model.layer_parameters"));
  add(Alias("checkpoint.model_datatype", "model.model_datatype"));
  add(Alias("checkpoint.optimizer_datatype", "model.optimizer_datatype"));
}

// What a run writes and checks: side_io, output, metric.
void AddOutputKeys(std::vector<KeySpec>* t) {
  auto add = [t](KeySpec k) { t->push_back(std::move(k)); };

  // side_io
  add(String("side_io.read_file", DLIO_FIELD(std::string, side_io.read_file),
             "file read beside the training data (metadata, stats); relative paths are under "
             "dataset.data_folder; empty = no side reads"));
  add(Uint("side_io.read_file_size", DLIO_FIELD(uint64_t, side_io.read_file_size), {0, kTiB},
           "bytes of the side file the generate phase creates when it is missing (0 = it must "
           "exist)",
           kSizeUnits));
  add(String("side_io.read_file_format", DLIO_FIELD(std::string, side_io.read_file_format),
             "a Format registry name whose writer stores one sample of read_file_size bytes: "
             "raw (the seeded bytes alone), hdf5, ..."));
  add(Uint("side_io.read_size", DLIO_FIELD(uint64_t, side_io.read_size), {0, kGiB},
           "bytes per side read", kSizeUnits));
  add(Uint("side_io.reads", DLIO_FIELD(uint64_t, side_io.reads), {0, 1 << 24},
           "side reads per training step (per_step) or in the whole run (spread, "
           "before_training)"));
  add(Enum("side_io.schedule", DLIO_ENUM_FIELD(SideIoSchedule, side_io.schedule),
           "per_step: before every training step; spread: at seeded random steps over the run; "
           "before_training: all before the first epoch"));
  add(Enum("side_io.access", DLIO_ENUM_FIELD(SideIoAccess, side_io.access),
           "offsets of side reads: seeded random, or consecutive (wrapping at the end); whole: "
           "each side read is a pass over the whole file (opened, read to its end in requests "
           "of read_size as Python's buffered reader makes them, closed)"));
  add(Uint("side_io.end_reads", DLIO_FIELD(uint64_t, side_io.end_reads), {0, 1024},
           "with access whole: requests of read_size after each pass has found the end, which "
           "return nothing (a parser asking again: pandas' CSV parser 1, Python's f.read() 0)"));
  add(Uint("side_io.write_bytes", DLIO_FIELD(uint64_t, side_io.write_bytes), {0, kTiB},
           "bytes every rank writes to side_io.write_file after training (0 = none)", kSizeUnits));
  add(String("side_io.write_file", DLIO_FIELD(std::string, side_io.write_file),
             "name of the end-of-run file under output.folder; {rank} is replaced by the rank; a "
             ".json name gets valid JSON content"));
  add(Uint("side_io.write_request_size", DLIO_FIELD(uint64_t, side_io.write_request_size),
           {0, kGiB}, "bytes per end-of-run write request (0 = the whole file in one request)",
           kSizeUnits));

  // output
  add(String("output.folder", DLIO_FIELD(std::string, output.folder),
             "where summary.json, per-rank stats, logs and traces go", kNonEmpty));
  add(String("output.log_file", DLIO_FIELD(std::string, output.log_file),
             "log file name inside output.folder"));
  add(Enum("output.log_level", DLIO_ENUM_FIELD(LogLevel, output.log_level),
           "log verbosity (warning and critical also accepted)", LogLevelSetter));
  add(Bool("output.trace", DLIO_FIELD(bool, output.trace),
           "write `trace-RANK-of-RANKS.pfw` (DFTracer/Chrome trace events)"));
  add(Bool("output.trace_gzip", DLIO_FIELD(bool, output.trace_gzip),
           "gzip the trace: `trace-RANK-of-RANKS.pfw.gz`"));
  add(Bool("output.progress", DLIO_FIELD(bool, output.progress),
           "progress line when stderr is a terminal"));
  add(Alias("output.metric.exclude_start_steps", "train.excluded_start_steps"));
  add(Unused("output.metric.exclude_end_steps", "DLIO: steps left out at the end of a block"));

  // metric
  add(Double("metric.au", DLIO_FIELD(double, metric.au), {0, 1, /*min_exclusive=*/true},
             "accelerator-utilisation target in (0, 1]; summary.json says whether it was met"));
  add(Enum("metric.mlperf_rules", DLIO_ENUM_FIELD(MlperfRules, metric.mlperf_rules),
           "MLPerf Storage training rules: warn when an epoch has fewer than 500 steps (the "
           "dataset-smaller-than-5x-memory warning applies to every training run on files "
           "without reader.odirect); auto = on when model.name is unet3d, resnet50 or "
           "cosmoflow"));
}

// DLIO's profiling section and keys DLIO ignores.
void AddProfilingKeys(std::vector<KeySpec>* t) {
  auto add = [t](KeySpec k) { t->push_back(std::move(k)); };

  // profiling (DLIO)
  add(Enum("profiling.profiler", DLIO_ENUM_FIELD(Profiler, profiling.profiler),
           "with workflow.profiling: iostat runs `iostat -mdxtcy -o JSON 1` on rank 0 into "
           "output.folder/iostat.json (DLIO's default; dlio's is none); darshan and tensorboard "
           "are accepted and not run (use output.trace)"));
  add(Unused("profiling.iostat_devices", "DLIO: devices for iostat (dlio's iostat reports all)"));
  add(Unused("logging", "in DLIO's s3dlio configs (logging.verbosity); DLIO ignores it"));
}

std::vector<KeySpec> BuildTable() {
  std::vector<KeySpec> t;
  AddModelKeys(&t);
  AddRunKeys(&t);
  AddDatasetKeys(&t);
  AddReaderKeys(&t);
  AddReaderModelKeys(&t);
  AddCheckpointKeys(&t);
  AddCheckpointTorchSaveKeys(&t);
  AddOutputKeys(&t);
  AddStorageKeys(&t);
  AddProfilingKeys(&t);
  return t;
}

}  // namespace

const std::vector<KeySpec>& KeyTable() {
  static const std::vector<KeySpec> table = BuildTable();
  return table;
}

}  // namespace dlio::config_internal
