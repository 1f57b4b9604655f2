// The workload description, in the public DLIO YAML schema: plain structs with defaults.
// Parse*() fill them from YAML/JSON text, ApplyOverride() takes "dataset.num_files_train=8" or
// DLIO's "++workload.dataset.num_files_train=8", and Validate() names the offending key.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dlio/config_enums.h"
#include "dlio/distribution.h"
#include "dlio/option_sections.h"
#include "dlio/status.h"

namespace dlio {

// How the emulated job splits the model (DLIO's model.parallelism). Only checkpoint sizes use it.
struct ParallelismConfig {
  uint64_t tensor = 1;      // model.parallelism.tensor: tensor-parallel degree
  uint64_t pipeline = 1;    // model.parallelism.pipeline: pipeline stages
  int64_t data = -1;        // model.parallelism.data: data-parallel degree for checkpoint.mode
                            // subset (-1 = world / (tensor x pipeline), DLIO's default mode)
  uint64_t zero_stage = 0;  // model.parallelism.zero_stage: DeepSpeed ZeRO stage 0-3
};

// A decoder-only transformer (DLIO's model.transformer), for the transformer checkpointer.
struct TransformerConfig {
  uint64_t vocab_size = 32000;        // model.transformer.vocab_size
  uint64_t hidden_size = 2048;        // model.transformer.hidden_size
  uint64_t ffn_hidden_size = 8192;    // model.transformer.ffn_hidden_size
  uint64_t num_attention_heads = 32;  // model.transformer.num_attention_heads
  uint64_t num_kv_heads = 8;          // model.transformer.num_kv_heads
};

struct ModelConfig {
  std::string name = "default";   // model.name
  std::string type;               // model.type: "transformer" selects the transformer checkpointer
  uint64_t model_size_bytes = 0;  // model.model_size (DLIO) — used by checkpoints when set
  Datatype model_datatype = Datatype::kFp16;      // model.model_datatype: bytes per weight
  Datatype optimizer_datatype = Datatype::kFp32;  // model.optimizer_datatype: per optimizer value
  int64_t num_layers = -1;                        // model.num_layers (-1 = not a layered model)
  std::vector<uint64_t> optimization_groups;      // model.optimization_groups (older DLIO configs)
  std::vector<uint64_t> layer_parameters;         // model.layer_parameters (older DLIO configs)
  ParallelismConfig parallelism;
  TransformerConfig transformer;
};

struct WorkflowConfig {
  bool generate_data = false;  // workflow.generate_data
  bool train = true;           // workflow.train
  bool checkpoint = false;     // workflow.checkpoint
  bool evaluation = false;     // workflow.evaluation
  bool profiling = false;      // workflow.profiling: turns the tracer on
};

struct DatasetConfig {
  std::string data_folder = "./data";      // dataset.data_folder
  std::string format = "npz";              // dataset.format (a Format registry name)
  std::string file_prefix = "img";         // dataset.file_prefix
  uint64_t num_files_train = 8;            // dataset.num_files_train
  uint64_t num_files_eval = 0;             // dataset.num_files_eval
  uint64_t num_samples_per_file = 1;       // dataset.num_samples_per_file
  uint64_t record_length_bytes = 65536;    // dataset.record_length_bytes (alias record_length)
  uint64_t record_length_bytes_stdev = 0;  // dataset.record_length_bytes_stdev
  // dataset.record_length_bytes_sizes: when not empty, file i's samples are sizes[i mod n] bytes
  // (a dataset of a few distinct file sizes: images and their masks); record_length_bytes is
  // derived from them as their mean while parsing.
  std::vector<uint64_t> record_length_bytes_sizes;
  uint64_t record_length_bytes_resize = 0;  // dataset.record_length_bytes_resize (0 = none)
  // DLIO's record shape: when not empty, a sample is an array of these dimensions of
  // record_element_type, and record_length_bytes is derived from them while parsing; a format
  // whose records are uint8 pixels whatever the type (jpeg, png) counts one byte per element
  // once the registries are known (ApplyFormatRecordShapes, dlio/registries.h).
  std::vector<uint64_t> record_dims;          // dataset.record_dims
  std::string record_element_type = "uint8";  // dataset.record_element_type (numpy's name)
  uint64_t num_subfolders_train = 0;          // dataset.num_subfolders_train
  uint64_t num_subfolders_eval = 0;           // dataset.num_subfolders_eval
  std::string compression =
      "none";                 // dataset.compression: none, gzip, zlib, deflate, lzf, bz2, zip, xz
  int compression_level = 4;  // dataset.compression_level 0-9
  // dataset.compression_ratio (_stdev): how much generated records compress (hdf5 chunks, npz
  // members; a normal draw per chunk or member, at least 1); 1 = random bytes, incompressible.
  double compression_ratio = 1.0;
  double compression_ratio_stdev = 0.0;
  bool keep_files = true;  // dataset.keep_files: false = remove what this run generated
  // The sections formats declare and parse through their own keys (parquet's dataset.parquet.*
  // and reader.pyarrow_read, format/parquet/parquet_keys.cc; webdataset's reader.tarfile_open,
  // format/webdataset/webdataset_keys.cc; hdf5's chunking, filter, metadata, lookup and
  // hdf5.num_dset_per_record keys and reader.h5py_reopen / hdf5_lookup_dataset,
  // format/hdf5/hdf5_keys.cc; npy and npz's dataset.sample_layout, format/npy_keys.cc;
  // tfrecord's dataset.write_index and reader.use_index, format/tfrecord/tfrecord_keys.cc; csv's
  // dataset.csv_header, format/csv/csv_keys.cc; jpeg's and png's dataset.image_*,
  // format/image/image_keys.cc; and the pyio I/O model's reader.pyio_*, io_models/pyio_keys.cc,
  // which every format's pyio reader reads), handed whole to FormatOptions::formats.
  OptionSections formats;
};

// Where files live (DLIO's `storage:` section). The runner turns it into StorageOptions.
struct StorageConfig {
  std::string storage_type =
      "posix";  // storage.storage_type: posix (DLIO local_fs), memory, slow, mpiio
  std::string storage_root =
      "./";  // storage.storage_root: prefix of relative data/checkpoint folders
  // The sections implementations declare and parse through their own keys (the s3 storage's
  // storage.storage_options.*, storage/s3/s3_keys.cc; slow's storage.slow_*, storage/slow_keys.cc;
  // mpiio's storage.mpiio_collective, storage/mpiio_keys.cc; tiered's storage.tiered_source,
  // tiers, cache_policy and cache_scope, cache/tiered_keys.cc), handed whole to
  // StorageOptions::backends.
  OptionSections backends;
};

struct ReaderConfig {
  DataLoader data_loader = DataLoader::kDlio;  // reader.data_loader: dlio, pytorch, tensorflow, ...
  std::string pipeline = "threaded";  // reader.pipeline: threaded, sync (no overlap), preload
  uint64_t batch_size = 1;            // reader.batch_size
  uint64_t batch_size_eval = 1;       // reader.batch_size_eval
  uint64_t read_threads = 1;          // reader.read_threads (0 means: read on the main thread)
  // reader.thread_nice: nice increment of read/preprocessing threads; -1 (auto): 10 when
  // train.accelerators_per_process > 1, else 0 (EffectiveThreadNice)
  int64_t thread_nice = -1;
  uint64_t computation_threads = 1;  // reader.computation_threads (preprocessing workers)
  // DLIO's shape of a sample after its transform, the array handed to the loader: when not
  // empty, dataset.record_length_bytes_resize is derived from it (no I/O effect).
  std::vector<uint64_t> transformed_record_dims;          // reader.transformed_record_dims
  std::string transformed_record_element_type = "uint8";  // reader.transformed_record_element_type
  uint64_t prefetch_size = 2;                      // reader.prefetch_size (batches buffered ahead)
  ShuffleMode file_shuffle = ShuffleMode::kOff;    // reader.file_shuffle
  ShuffleMode sample_shuffle = ShuffleMode::kOff;  // reader.sample_shuffle
  uint64_t shuffle_size = 1024;  // reader.shuffle_size (shuffle-buffer sampler window)
  std::string sampler = "auto";  // reader.sampler: auto, sequential, shuffle, shuffle_buffer
  Sharding sharding = Sharding::kBlock;  // reader.sharding (none = replicated)
  double read_fraction = 1.0;            // reader.read_fraction: share of its plan a rank reads
  uint64_t file_interleave = 0;          // reader.file_interleave: files read at a time (tf.data's
                                         // interleave cycle_length; 0 = off)
  uint64_t transfer_size = 0;            // reader.transfer_size (bytes per read request; 0 = whole
                                         // sample, DLIO's None; tfrecord readers may use 256 KiB)
  DistributionSpec preprocess_time;      // reader.preprocess_time (+ _stdev), seconds per sample
  ReadType read_type = ReadType::kOnDemand;  // reader.read_type (memory = preload)
  bool odirect = false;                      // reader.odirect: O_DIRECT reads
  bool drop_last = true;                     // reader.drop_last: drop a final partial batch
  uint64_t max_open_files = 64;              // reader.max_open_files: open readers kept per rank
  bool verify_checksums = true;              // reader.verify_checksums: check CRCs (tfrecord)
  bool decode = false;  // reader.decode: decode samples (jpeg/png pixels, csv floats)
  uint64_t max_decoded_bytes = uint64_t{1} << 30;  // reader.max_decoded_bytes (decompression bombs)
  bool reopen_files_each_epoch = false;            // reader.reopen_files_each_epoch
  bool open_per_sample = false;  // reader.open_per_sample: open and close a file around each sample
  // reader.open_files_at_start: open, learn about and close every file once before the first epoch
  bool open_files_at_start = false;
  IoModel io_model = IoModel::kAuto;  // reader.io_model: whose requests readers issue
  // reader.client_costs: none (a framework model's requests into dlio's reused buffers) or
  // framework (also the framework's client work: fresh arrays, copies, CRC, collate).
  ClientCosts client_costs = ClientCosts::kNone;
  // reader.fresh_page_share: the least share of the pages reads of 64 KiB or more fill that fault
  // in within the read (FreshReadPages, dlio/fresh_read_pages.h); 0: none made fresh.
  double fresh_page_share = 0;
  // reader.loader: auto (as io_model and data_loader pick it), threads, or pytorch_workers
  // (DataLoader worker processes reading with io_model's request model).
  ReaderLoader loader = ReaderLoader::kAuto;
  // The sections pipelines declare and parse through their own keys (the pytorch pipeline's
  // reader.persistent_workers, pipeline/pytorch_keys.cc), handed whole to
  // PipelineOptions::sections.
  OptionSections pipelines;
};

struct TrainConfig {
  uint64_t epochs = 1;                // train.epochs
  DistributionSpec computation_time;  // train.computation_time (+ _stdev), seconds per step
  std::string compute = "sleep";      // train.compute_emulator: sleep, spin
  int64_t total_training_steps = -1;  // train.total_training_steps (-1 = whole epochs)
  uint64_t seed = 123;                // train.seed
  bool seed_change_epoch = true;      // train.seed_change_epoch
  uint64_t excluded_start_steps = 1;  // train.excluded_start_steps (AU warm-up steps per block)
  bool barrier_per_step = true;       // train.barrier_per_step
  // train.accelerators_per_process: accelerators one process emulates, as that many training
  // threads, each a rank of its own (rank = process rank x K + k, world = processes x K).
  uint64_t accelerators_per_process = 1;
  // train.barrier_wait: how a process waits in the cross-process (MPI) step barrier: "sleep" (a
  // nonblocking barrier polled with short sleeps) or "spin" (the MPI library's MPI_Barrier).
  BarrierWait barrier_wait = BarrierWait::kSleep;
};

struct EvaluationConfig {
  DistributionSpec eval_time;         // evaluation.eval_time (+ _stdev), seconds per step
  uint64_t epochs_between_evals = 1;  // evaluation.epochs_between_evals
  uint64_t eval_after_epoch = 1;      // evaluation.eval_after_epoch
};

struct CheckpointConfig {
  std::string checkpoint_folder = "./checkpoints";  // checkpoint.checkpoint_folder
  std::string type = "auto";  // checkpoint.type: auto, paper (5 files), model (model_size_bytes),
                              // transformer (model.* description); auto picks one (see docs)
  uint64_t checkpoint_after_epoch = 1;      // checkpoint.checkpoint_after_epoch
  uint64_t epochs_between_checkpoints = 1;  // checkpoint.epochs_between_checkpoints
  int64_t steps_between_checkpoints = -1;   // checkpoint.steps_between_checkpoints (-1 = off)
  uint64_t model_size_bytes = 0;            // checkpoint.model_size_bytes (0 = model.model_size)
  bool fsync = false;                       // checkpoint.fsync
  bool read_back = false;                   // checkpoint.read_back: read each one after writing
  bool resume = false;  // checkpoint.resume: load the newest checkpoint before training
  uint64_t transfer_size = 4 << 20;  // checkpoint.transfer_size (bytes per write request)
  CheckpointRankMode rank_mode = CheckpointRankMode::kAll;  // checkpoint.rank_mode
  int64_t num_checkpoints_write = -1;  // checkpoint.num_checkpoints_write (-1 = by cadence)
  int64_t num_checkpoints_read = -1;   // checkpoint.num_checkpoints_read (-1 = none)
  std::string storage_type;            // checkpoint.storage_type ("" = storage.storage_type)
  CheckpointMode mode = CheckpointMode::kDefault;  // checkpoint.mode
  double time_between_checkpoints = -1;  // checkpoint.time_between_checkpoints: seconds of
                                         // emulated compute before each checkpoint-only op
  bool rank_sync = false;                // checkpoint.rank_sync: barrier inside the timing
  uint64_t size_divisor = 1;             // checkpoint.size_divisor: every file's bytes / this
  std::string tag_file;                  // checkpoint.tag_file: DeepSpeed's `latest` ("" = none)
  std::string folder_name = "ckpt-{id:06}";  // checkpoint.folder_name: each checkpoint's folder
  // The sections checkpointers declare and parse through their own keys (torch_save's
  // checkpoint.torch_*, checkpoint/torch_save_keys.cc; model's checkpoint.model_files,
  // checkpoint/model_checkpoint_keys.cc), handed whole to CheckpointOptions::sections.
  OptionSections checkpointers;
};

// I/O beside the training data (DLIO paper: FRNN's metadata reads, climate segmentation's stats
// file and end-of-run model file): reads of one side file on a schedule, and one write per rank
// at the end of training. Both go through the run's Storage, so they are traced and counted.
struct SideIoConfig {
  std::string read_file;                 // side_io.read_file ("" = no side reads); relative paths
                                         // are under dataset.data_folder
  uint64_t read_file_size = 0;           // side_io.read_file_size: generated when > 0 and missing
  std::string read_file_format = "raw";  // side_io.read_file_format: raw or a Format name
  uint64_t read_size = 4096;             // side_io.read_size: bytes per side read
  uint64_t reads = 0;                    // side_io.reads: per step (per_step) or in all
  SideIoSchedule schedule = SideIoSchedule::kPerStep;  // side_io.schedule
  SideIoAccess access = SideIoAccess::kRandom;         // side_io.access
  uint64_t end_reads = 0;    // side_io.end_reads: empty requests after each whole-file pass
  uint64_t write_bytes = 0;  // side_io.write_bytes: end-of-run write per rank (0 = off)
  std::string write_file = "side_io-{rank}.bin";  // side_io.write_file, under output.folder
  uint64_t write_request_size = 0;                // side_io.write_request_size (0 = one request)
};

struct OutputConfig {
  std::string folder = "./output";       // output.folder
  std::string log_file = "dlio.log";     // output.log_file
  LogLevel log_level = LogLevel::kInfo;  // output.log_level
  bool trace = false;                    // output.trace (also workflow.profiling / --trace)
  bool trace_gzip = false;               // output.trace_gzip: write trace-<rank>.pfw.gz
  bool progress = true;                  // output.progress: progress line on a terminal
};

struct ProfilingConfig {
  // profiling.profiler: what DLIO's workflow.profiling runs beside the benchmark. "iostat" runs
  // `iostat -mdxtcy -o JSON 1` on rank 0 into output.folder/iostat.json; "none" nothing; DLIO's
  // "darshan" and "tensorboard" are accepted and not run (use output.trace or dlio-run profile).
  Profiler profiler = Profiler::kNone;
};

struct MetricConfig {
  double au = 0.90;                               // metric.au: AU target, 0-1
  MlperfRules mlperf_rules = MlperfRules::kAuto;  // metric.mlperf_rules (MLPerf Storage checks)
};

// The keys `scale` multiplies unless `scale_keys` names others.
inline constexpr const char* kDefaultScaleKeys =
    "dataset.num_files_train,dataset.num_files_eval,train.total_training_steps,"
    "checkpoint.steps_between_checkpoints";

struct WorkloadConfig {
  std::string name = "default";  // preset name or the YAML file's stem
  // scale: factor applied to the counts named in scale_keys by ScaleConfig (the runner applies it
  // to the final config), so a paper-sized workload runs small with its sizes and pattern kept.
  double scale = 1.0;
  std::string scale_keys = kDefaultScaleKeys;  // scale_keys: comma-separated count keys
  ModelConfig model;
  std::string framework = "dlio";  // framework (informational)
  WorkflowConfig workflow;
  DatasetConfig dataset;
  ReaderConfig reader;
  TrainConfig train;
  EvaluationConfig evaluation;
  CheckpointConfig checkpoint;
  OutputConfig output;
  MetricConfig metric;
  ProfilingConfig profiling;
  StorageConfig storage;  // storage.* (was dataset.storage)
  SideIoConfig side_io;

  // Checks every value and cross-key rule; the message names the full key path and, for
  // enumerations, the accepted values. What the named storage and format must be able to do is
  // asked of them by ValidateCapabilities (dlio/registries.h).
  Status Validate() const;
};

// Parses DLIO YAML (or JSON, which is YAML) text. `source` names the file in messages.
// Unknown keys are InvalidArgument with their full path and a did-you-mean; a key given twice in
// one map (also as two spellings of one key) is InvalidArgument naming it and both lines. A
// top-level "workload:" wrapper (as in DLIO's Hydra configs) is accepted and "hydra:" is ignored.
// Values not given keep `base`'s. DLIO keys that dlio accepts but does not emulate (see
// docs/configuration.md) add one line each to `warnings` when it is not null.
Result<WorkloadConfig> ParseConfig(const std::string& text, const std::string& source,
                                   const WorkloadConfig& base = WorkloadConfig(),
                                   std::vector<std::string>* warnings = nullptr);
// The largest config file LoadConfigFile reads (DLIO's configs hold a few KiB).
inline constexpr uint64_t kMaxConfigFileBytes = uint64_t{16} << 20;

// Reads and parses `path`; `name` becomes the file's stem unless the file sets it. InvalidArgument
// for a file that is not a regular file (a FIFO, a device: refused without reading or blocking) or
// is larger than kMaxConfigFileBytes; NotFound when it does not exist. An empty file (or one with
// only comments) adds a warning: every key then keeps its default.
Result<WorkloadConfig> LoadConfigFile(const std::string& path,
                                      const WorkloadConfig& base = WorkloadConfig(),
                                      std::vector<std::string>* warnings = nullptr);

// Applies one "section.key=value" (also "++workload.section.key=value" and "+workload..."),
// where value is YAML (so "{mean: 0.1, stdev: 0.01}" works). On error `config` may hold a
// partially applied map value; callers stop on error.
Status ApplyOverride(WorkloadConfig* config, const std::string& assignment,
                     std::vector<std::string>* warnings = nullptr);

// `config` with `scale` applied: every key of `scale_keys` (unsigned or signed integer keys)
// becomes max(floor, round(value * scale)), where the floor is 1, or min(value, world) for
// dataset.num_files_* (so every rank keeps a file); values <= 0 (0 files, -1 = off) are kept.
// The result has scale 1 (applying it twice changes nothing). When `notes` is given and the
// factor is not 1, one line saying what changed is appended ("scale 0.04: ... 43000 -> 1720").
// InvalidArgument naming `scale` or `scale_keys` for a bad factor or a key that is unknown or not
// an integer count.
Result<WorkloadConfig> ScaleConfig(const WorkloadConfig& config, int world = 1,
                                   std::vector<std::string>* notes = nullptr);

// The config as a JSON document with every key (written to the output folder for provenance).
std::string ConfigToJson(const WorkloadConfig& config);

// One line per key: "dataset.num_files_train" -> "uint, default 8: ...", for docs and --help.
struct ConfigKeyDoc {
  std::string key, type, default_value, description;
  std::string accepted_values;  // enums: "off, seed, random"; empty otherwise
  std::string range;            // numbers: "0 to 1024", "(0, 1]", "-1, or >= 1"; "not empty"; ""
  std::string alias_of;         // set for alternative spellings (e.g. dataset.record_length)
  bool used = true;             // false: a DLIO key accepted for compatibility, not emulated
};
std::vector<ConfigKeyDoc> ConfigKeyDocs();

// The "Keys" reference of docs/configuration.md rendered from ConfigKeyDocs(): one "### <section>"
// heading and table per section of used keys (aliases included; sections in the order of their
// first key, each once), then one table of the DLIO keys accepted but not used. `dlio-run list
// keys --markdown` prints it; tools/update_config_docs.sh splices it into the document, and
// tests/config/config_docs_test.cc checks that the document holds exactly this text.
std::string ConfigKeysMarkdown();

}  // namespace dlio
