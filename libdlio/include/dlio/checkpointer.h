// Checkpointer: writes (and reads back) model/optimizer state at a cadence.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dlio/clock.h"
#include "dlio/config_enums.h"
#include "dlio/option_sections.h"
#include "dlio/registry.h"
#include "dlio/status.h"
#include "dlio/storage.h"
#include "dlio/tracer.h"

namespace dlio {

// The model a "transformer" checkpoint holds: DLIO's model.* description of a decoder-only
// transformer and how the emulated job splits it (docs/workloads.md gives the formulas).
struct TransformerModel {
  int64_t num_layers = -1;  // transformer layers (<= 0: no layer state)
  uint64_t vocab_size = 32000;
  uint64_t hidden_size = 2048;
  uint64_t ffn_hidden_size = 8192;
  uint64_t num_attention_heads = 32;
  uint64_t num_kv_heads = 8;
  uint64_t tensor = 1;      // tensor-parallel degree
  uint64_t pipeline = 1;    // pipeline stages
  int64_t data = -1;        // data-parallel degree, used when `subset`
  bool subset = false;      // the run's ranks are the first ranks of a larger job
  uint64_t zero_stage = 0;  // DeepSpeed ZeRO stage 0-3
  Datatype model_datatype = Datatype::kFp16;
  Datatype optimizer_datatype = Datatype::kFp32;
  std::vector<uint64_t> optimization_groups;  // older DLIO: optimizer state given directly
  std::vector<uint64_t> layer_parameters;     // older DLIO: per-layer tensors given directly
};

// One file of a checkpoint, named inside the checkpoint's directory.
struct CheckpointPlanFile {
  std::string name;
  uint64_t bytes = 0;
};

// What one rank writes per transformer checkpoint.
struct TransformerRankPlan {
  uint64_t data_parallelism = 1;  // the job's data-parallel degree
  int tensor_rank = 0, pipeline_rank = 0, data_rank = 0;
  int64_t first_layer = 0, last_layer = -1;  // layer indices of its stage (0 = embedding,
                                             // num_layers + 1 = lm_head, + 2 = final norm)
  uint64_t model_bytes = 0;                  // model (layer) state this rank writes
  uint64_t optimizer_bytes = 0;              // optimizer state this rank writes
  std::vector<CheckpointPlanFile> files;     // DLIO's names; empty when the rank writes nothing
};

// Parameters of the whole model as DLIO counts them: embedding + num_layers x (2 norms, QKV with
// grouped K/V, attention output, gated MLP up (2 x ffn) and down) + final norm + lm_head.
uint64_t TransformerParameterCount(const TransformerModel& model);

// The files rank `rank` of `world` writes per checkpoint. InvalidArgument (naming the key) when
// the layout does not fit the world (world not a multiple of tensor x pipeline; subset world
// larger than data x tensor x pipeline) or a datatype is unknown. Pure: touches no storage.
Result<TransformerRankPlan> PlanTransformerCheckpoint(const TransformerModel& model, int rank,
                                                      int world);

struct CheckpointOptions {
  std::string name = "paper";  // paper: 2 x 1 KB, 4 KB, 64 KB, 4 MB files; model: model_size_bytes
                               // transformer: `transformer`'s DLIO layout; dlio_benchmark: DLIO's
  std::string folder = "./checkpoints";
  uint64_t model_size_bytes = 0;     // model: bytes per checkpoint (split over ranks by rank_mode)
  bool fsync = false;                // fsync every file before its close, then the folders
  bool read_back = false;            // read every file back after writing it
  uint64_t transfer_size = 4 << 20;  // bytes per write/read request
  int rank = 0;
  int world = 1;
  bool root_only = false;  // only rank 0 writes (L2HMC); others return empty results
  uint64_t seed = 0;
  uint64_t size_divisor = 1;     // every file's bytes divided by this, rounded up (>= 1 byte)
  TransformerModel transformer;  // transformer: the model and its parallelism
  // reader.client_costs framework: the checkpointer emulates the framework's client work too
  // (torch_save: a load reads storages past the mmap threshold `import torch` leaves into fresh
  // pages, as torch.load's new storages; false: every read into one buffer it keeps).
  bool framework_client_costs = false;
  // A file in `folder` that rank 0 rewrites after each save with the checkpoint folder's name, and
  // that a load reads first (DeepSpeed's `latest`); "" = none.
  std::string tag_file;
  // The template of each checkpoint's folder name (checkpoint/folder_name.h): {id} the checkpoint
  // id, {step} the global step the save follows, {epoch} the epoch it happens in (from 0), each
  // maybe zero-padded ({id:06}). Not for
  // dlio_benchmark, which names its folders as DLIO does.
  std::string folder_name = "ckpt-{id:06}";
  // dlio_benchmark: DLIO's framework ("pytorch": .pt files; "tensorflow": tf.train.Checkpoint's
  // files) and model.type (anything but "transformer" adds model_states-<rank> of
  // model_size_bytes, kDlioDefaultModelSizeBytes when that is 0).
  std::string framework = "pytorch";
  std::string model_type;
  // The implementations' own options, parsed from the keys they declare (torch_save's
  // TorchSaveOptions, checkpoint/torch_save_options.h; model's ModelCheckpointOptions,
  // checkpoint/model_checkpoint_options.h): the config's CheckpointConfig::checkpointers, handed
  // on whole; each reads its own section (sections.Value<T>()).
  OptionSections sections;
};

// DLIO's model.model_size_bytes default: a DLIO config without a model size still checkpoints a
// model_states-<rank> file of this many bytes.
inline constexpr uint64_t kDlioDefaultModelSizeBytes = 10240;

// The files rank options.rank of options.world writes per checkpoint in DLIO's layout
// (dlio_benchmark/checkpointing/base_checkpointing.py), in DLIO's order, sizes before
// size_divisor and root_only: with model.parallelism.zero_stage 0 only ranks < tensor x pipeline
// write; model_states-<rank> (model_size_bytes, kDlioDefaultModelSizeBytes when 0) unless
// model_type is "transformer"; then PlanTransformerCheckpoint's layer and optimizer files. Names
// end in ".pt" for framework pytorch; for tensorflow each state is "<stem>.pb-1.index" (an
// approximate kTfIndexBytes) and "<stem>.pb-1.data-00000-of-00001" (the state's bytes), and rank
// 0 adds the folder's "checkpoint" file. InvalidArgument naming the key for an unknown framework
// or a layout that does not fit the world. Pure: touches no storage.
Result<std::vector<CheckpointPlanFile>> PlanDlioBenchmarkCheckpoint(
    const CheckpointOptions& options);
inline constexpr uint64_t kTfIndexBytes = 512;

struct CheckpointFileResult {
  std::string path;
  uint64_t bytes = 0;
};

struct CheckpointResult {
  uint64_t id = 0;  // checkpoint number, from 0
  // The global step in the checkpoint's folder name (checkpoint.folder_name's {step}); -1 when the
  // name holds none.
  int64_t step = -1;
  // The epoch (from 0) in the checkpoint's folder or file names ({epoch}); -1 when they hold none.
  int64_t epoch = -1;
  uint64_t bytes_written = 0;
  int64_t write_ns = 0;  // from the first open to the last close (and fsyncs)
  uint64_t bytes_read = 0;
  int64_t read_ns = 0;
  std::vector<CheckpointFileResult> files;
};

// Built-ins (RegisterBuiltinCheckpointers): "paper", "model", "transformer", "torch_save" and
// "dlio_benchmark". dlio_benchmark writes PlanDlioBenchmarkCheckpoint's files into
// <folder>/global_epoch<epoch>_step<step>/ as DLIO names it, with no manifest (DLIO's file counts
// hold); a checkpoint is complete there when each planned file has its planned size, and a rerun
// rewrites an existing file only when its size and first transfer are what the save writes; a Load
// of an id this checkpointer did not save reads global_epoch1_step<id + 1> (DLIO's checkpoint-only
// names), CompleteIds lists those folders. The other built-ins' files live in
// <folder>/<folder_name>/ (ckpt-<id as 6 digits> by default; DeepSpeed's global_step{step}:
// checkpoint/folder_name.h), named per rank: paper writes rank<r>-index-a.bin (1 KiB),
// rank<r>-index-b.bin (1 KiB), rank<r>-meta.bin (4 KiB), rank<r>-optimizer.bin (64 KiB) and
// rank<r>-model.bin (4 MiB) -- the paper's "KB/MB" are 1024-based as in its code; model writes
// model-rank<r>.bin with its share of model_size_bytes (the first total % world ranks get one
// byte more; a rank with no bytes writes nothing); with model_files = k > 1 that share is split
// into model-rank<r>-<i>of<k>.bin, i = 1..k, the first (share % k) one byte larger, and a file of
// at most transfer_size bytes is written with one request (L2HMC: one fwrite per file);
// transformer writes PlanTransformerCheckpoint's
// files (DLIO's names: zero_pp_rank_<d>_mp_rank_<m>_{model,optim}_states.pt, model_<m>_model_
// states.pt, layer_<i>-model_<m>_model_states.pt); torch_save writes torch_file_name
// (model-rank<r>.pt), the zip torch.save writes for torch_state_dict, with its requests (the whole
// file on every writing rank; docs/workloads.md), or several such files (a nested container's:
// DeepSpeed's model states and optimizer states, each with its data.pkl size). Content is seeded
// from (seed, id, rank). Ids: the first Save uses one past the highest id of the folders
// folder_name names already in the folder when the checkpointer was built (a template without
// {id} numbers them 0, 1, ... by their steps; earlier runs' checkpoints are kept), then counts up;
// in multi-rank runs every rank must build its checkpointer before any rank saves. A final file
// name that already exists is refused with AlreadyExists, never overwritten. After its files, each
// rank writes a manifest, <folder_name>/.dlio-complete-rank<r>: an empty file (no write request, no
// fsync) that says the rank's files are all there; a checkpoint whose save was killed has none and
// is torn (CompleteIds skips it). Building a checkpointer removes, from the checkpoint folders, the
// temporaries of saves killed mid-write (DLIO's tensorflow layout, earlier dlio versions) whose
// owner process is provably dead (same host and pid namespace, pid gone or reused:
// core/owner_stamp.h); nothing else. Tracing: "checkpoint.capture" (Save) and "checkpoint.restart"
// (Load), cat "checkpoint", index = id. Not thread-safe: called from the training loop.
class Checkpointer {
 public:
  virtual ~Checkpointer() = default;
  // Writes checkpoint for (epoch, step): every file in place under its final name, as torch.save
  // and DLIO write theirs (one open, the writes, close; no temporary, no rename), except DLIO's
  // tensorflow files, which go through WriteFileAtomically as TensorFlow's writer renames its
  // own; the manifest comes last, so a crash leaves a torn checkpoint CompleteIds skips. A failed
  // Save (open, write, close or read_back) removes every file it created and the checkpoint
  // folder if it created it and nothing else is in it, and returns the error naming the path;
  // its id is not reused.
  virtual Result<CheckpointResult> Save(uint64_t epoch, int64_t step) = 0;
  // With root_only on a rank > 0 both return an empty result (no files) without touching storage.
  // Reads back checkpoint `id` written by this checkpointer; verifies sizes and content
  // (Corruption naming the file and offset).
  virtual Result<CheckpointResult> Load(uint64_t id) = 0;
  // The ids below next_id() of the checkpoints in the folder that hold this rank's complete share
  // (its manifest and each of its files at its planned size), ascending. A rank that writes nothing
  // counts every checkpoint folder. Ranks of one job intersect their lists to find complete
  // checkpoints. Default (a checkpointer without manifests): every id below next_id().
  virtual Result<std::vector<uint64_t>> CompleteIds() {
    std::vector<uint64_t> ids;
    for (uint64_t id = 0; id < next_id(); ++id) ids.push_back(id);
    return ids;
  }
  // The id the next Save uses; lower ids may hold checkpoints of earlier runs.
  virtual uint64_t next_id() const { return 0; }
};

struct CheckpointEnv {
  Storage* storage = nullptr;  // not owned
  const Clock* clock = nullptr;
  Tracer* tracer = nullptr;
};

using CheckpointerFactory = std::function<Result<std::unique_ptr<Checkpointer>>(
    const CheckpointOptions&, const CheckpointEnv&)>;

// What a checkpointer's registry entry declares, so the runner asks instead of comparing names.
struct CheckpointerCapabilities {
  // Whether, with these options, it writes a transformer's layers and optimizer state from the
  // model description (transformer; dlio_benchmark with model.num_layers > 0): the runner then
  // logs the checkpoint's plan. Empty: never.
  std::function<bool(const CheckpointOptions&)> writes_transformer_layers;
  // The bytes rank options.rank of options.world writes per checkpoint, before size_divisor (the
  // preflight sums them over the ranks to check the checkpoint folder's free space). Called with
  // the options the runner would build it with; pure, touches no storage. An error (InvalidArgument
  // naming the key: a layout that does not fit the world) refuses the run before anything runs,
  // when rank 0's plan fails. Empty: its checkpoints are not sized (no disk check).
  std::function<Result<uint64_t>(const CheckpointOptions&)> rank_bytes;
  // The config keys that size its checkpoints, named by the preflight when they do not fit
  // (transformer: "model.transformer.*, model.num_layers"). Empty: checkpoint.model_size_bytes
  // when set, else model.model_size_bytes.
  std::string size_keys;
  // Refuses, before anything runs, options it would refuse when built that need no storage to
  // tell (InvalidArgument naming the key: a bad checkpoint.folder_name or tag_file). Pure.
  // Empty: nothing to check.
  std::function<Status(const CheckpointOptions&)> check_options;
  // Whether it follows DLIO's cadence and names (dlio_benchmark): step checkpoints count the
  // steps of each epoch, as DLIO does, not the run's; a checkpoint-only run with no writes reads
  // the first complete checkpoints (DLIO's global_epoch1_step1..N), not the newest. False: step
  // checkpoints count the run's steps and reads take the newest.
  bool dlio_cadence = false;
};

// The checkpointers by name (Registries::checkpointers).
using CheckpointerRegistry = Registry<CheckpointerFactory, CheckpointerCapabilities>;
// Registers the built-in checkpointers; called by RegisterBuiltins.
Status RegisterBuiltinCheckpointers(CheckpointerRegistry* checkpointers);

}  // namespace dlio
