#include "config/config_table.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace dlio::config_internal {
namespace {

// Accessor of one field as a plain function pointer (captureless lambdas convert).
#define DLIO_FIELD(T, member) \
  static_cast<T& (*)(WorkloadConfig&)>([](WorkloadConfig& c) -> T& { return c.member; })

KeySpec Bool(std::string path, bool& (*ref)(WorkloadConfig&), std::string desc) {
  KeySpec k;
  k.path = std::move(path);
  k.type = KeyType::kBool;
  k.bool_ref = ref;
  k.description = std::move(desc);
  return k;
}

KeySpec Uint(std::string path, uint64_t& (*ref)(WorkloadConfig&), std::string desc,
             uint32_t flags = kNone) {
  KeySpec k;
  k.path = std::move(path);
  k.type = KeyType::kUint;
  k.uint_ref = ref;
  k.flags = flags;
  k.description = std::move(desc);
  return k;
}

KeySpec Int(std::string path, int64_t& (*ref)(WorkloadConfig&), std::string desc,
            int64_t min = INT64_MIN) {
  KeySpec k;
  k.path = std::move(path);
  k.type = KeyType::kInt;
  k.int_ref = ref;
  k.int_min = min;
  k.description = std::move(desc);
  return k;
}

KeySpec Int32(std::string path, int& (*ref)(WorkloadConfig&), std::string desc) {
  KeySpec k;
  k.path = std::move(path);
  k.type = KeyType::kInt;
  k.int32_ref = ref;
  k.description = std::move(desc);
  return k;
}

KeySpec Double(std::string path, double& (*ref)(WorkloadConfig&), std::string desc) {
  KeySpec k;
  k.path = std::move(path);
  k.type = KeyType::kDouble;
  k.double_ref = ref;
  k.description = std::move(desc);
  return k;
}

KeySpec String(std::string path, std::string& (*ref)(WorkloadConfig&), std::string desc,
               uint32_t flags = kNone, CustomSetter custom = nullptr) {
  KeySpec k;
  k.path = std::move(path);
  k.type = KeyType::kString;
  k.string_ref = ref;
  k.flags = flags;
  k.custom = custom;
  k.description = std::move(desc);
  return k;
}

KeySpec Enum(std::string path, std::string& (*ref)(WorkloadConfig&),
             std::vector<std::string> accepted, std::string desc, CustomSetter custom = nullptr) {
  KeySpec k;
  k.path = std::move(path);
  k.type = KeyType::kEnum;
  k.string_ref = ref;
  k.accepted = std::move(accepted);
  k.custom = custom;
  k.description = std::move(desc);
  return k;
}

KeySpec Dist(std::string path, DistributionSpec& (*ref)(WorkloadConfig&), std::string desc) {
  KeySpec k;
  k.path = std::move(path);
  k.type = KeyType::kDistribution;
  k.dist_ref = ref;
  k.description = std::move(desc);
  return k;
}

KeySpec DistStdev(std::string path, DistributionSpec& (*ref)(WorkloadConfig&),
                  const std::string& of) {
  KeySpec k;
  k.path = std::move(path);
  k.type = KeyType::kDistributionStdev;
  k.dist_ref = ref;
  k.description = "DLIO sibling of " + of + ": a standard deviation > 0 turns a constant " + of +
                  " into normal(mean, stdev); applied after " + of + " whatever the order";
  return k;
}

KeySpec UintList(std::string path, std::vector<uint64_t>& (*ref)(WorkloadConfig&),
                 std::string desc) {
  KeySpec k;
  k.path = std::move(path);
  k.type = KeyType::kUintList;
  k.uint_list_ref = ref;
  k.description = std::move(desc);
  return k;
}

KeySpec Alias(std::string path, std::string of) {
  KeySpec k;
  k.path = std::move(path);
  k.alias_of = std::move(of);
  k.description = "alternative spelling of " + k.alias_of;
  return k;
}

KeySpec Unused(std::string path, std::string desc) {
  KeySpec k;
  k.path = std::move(path);
  k.type = KeyType::kAny;
  k.description = std::move(desc);
  return k;
}

// --- DLIO spellings mapped onto dlio's --------------------------------------------------

std::string StorageTypeSetter(WorkloadConfig&, const std::string& value, std::string* note) {
  if (value == "local_fs") {
    *note = "storage.storage_type 'local_fs' (DLIO) maps to dlio's 'posix'";
    return "posix";
  }
  return value;
}

std::string CheckpointTypeSetter(WorkloadConfig& c, const std::string& value, std::string* note) {
  // DLIO's checkpoint.type is where checkpoints are written from (CheckpointLocationType);
  // dlio's is which checkpointer writes them, so the DLIO values set rank_mode instead.
  if (value == "rank_zero") {
    c.checkpoint.rank_mode = "root";
  } else if (value == "all_ranks" || value == "independent") {
    c.checkpoint.rank_mode = "all";
  } else {
    return value;
  }
  *note = "checkpoint.type '" + value + "' (DLIO checkpoint location) sets checkpoint.rank_mode '" +
          c.checkpoint.rank_mode + "'; checkpoint.type stays '" + c.checkpoint.type + "'";
  return c.checkpoint.type;
}

std::string ShuffleSetter(WorkloadConfig&, const std::string& value, std::string*) {
  // YAML 1.1 writers emit `off` as False; DLIO itself treats a false shuffle as off.
  if (value == "false" || value == "False" || value == "FALSE" || value == "no") return "off";
  return value;
}

std::string ReadTypeSetter(WorkloadConfig& c, const std::string& value, std::string*) {
  // DLIO's "memory" read type loads the whole dataset before training: our preload pipeline.
  if (value == "memory") c.reader.pipeline = "preload";
  return value;
}

std::string LogLevelSetter(WorkloadConfig&, const std::string& value, std::string*) {
  std::string lower = value;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  if (lower == "warning") return "warn";
  if (lower == "critical") return "error";
  return lower;
}

std::vector<KeySpec> BuildTable() {
  std::vector<KeySpec> t;
  auto add = [&t](KeySpec k) { t.push_back(std::move(k)); };

  // Top level.
  add(String("name", DLIO_FIELD(std::string, name),
             "run name used in outputs: a preset's name or the YAML file's stem"));
  add(String("framework", DLIO_FIELD(std::string, framework),
             "framework being emulated (informational): tensorflow, pytorch, dlio"));
  add(Double("scale", DLIO_FIELD(double, scale),
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
             "the transformer checkpointer)"));
  add(Uint("model.model_size_bytes", DLIO_FIELD(uint64_t, model.model_size_bytes),
           "bytes of model state; checkpoints of type 'model' write this many bytes when "
           "checkpoint.model_size_bytes is 0",
           kSizeUnits));
  add(Alias("model.model_size", "model.model_size_bytes"));
  static const std::vector<std::string> kDatatypes = {"fp16", "bf16", "fp32",
                                                      "fp64", "int8", "uint8"};
  add(Enum("model.model_datatype", DLIO_FIELD(std::string, model.model_datatype), kDatatypes,
           "transformer checkpoints: datatype of the weights (2 bytes for fp16/bf16, 4 for fp32, "
           "8 for fp64, 1 for int8/uint8)"));
  add(Enum("model.optimizer_datatype", DLIO_FIELD(std::string, model.optimizer_datatype),
           kDatatypes, "transformer checkpoints: datatype of the optimizer state"));
  add(Int("model.num_layers", DLIO_FIELD(int64_t, model.num_layers),
          "transformer layers; > 0 makes checkpoints layered (DLIO's transformer checkpoint: "
          "embedding, num_layers layers, lm_head, final norm) and checkpoint.type auto picks "
          "'transformer' (-1 = not layered)",
          -1));
  add(UintList("model.optimization_groups",
               DLIO_FIELD(std::vector<uint64_t>, model.optimization_groups),
               "older DLIO configs: optimizer state given directly; each checkpointing rank writes "
               "3 x sum(groups) bytes (DLIO's int8 tensors a, b per group plus a combined one) "
               "instead of the computed optimizer state"));
  add(UintList("model.layer_parameters", DLIO_FIELD(std::vector<uint64_t>, model.layer_parameters),
               "older DLIO configs: parameters per tensor of every layer; each layer of the rank's "
               "pipeline stage writes sum(p / parallelism.tensor) bytes (int8) instead of the "
               "computed transformer layer"));
  add(Uint("model.parallelism.tensor", DLIO_FIELD(uint64_t, model.parallelism.tensor),
           "tensor-parallel degree: splits every layer's matrices (not its norms)"));
  add(Uint("model.parallelism.pipeline", DLIO_FIELD(uint64_t, model.parallelism.pipeline),
           "pipeline stages: layers are split over stages; stage 0 also holds the embedding, "
           "the last stage the lm_head and final norm"));
  add(Int("model.parallelism.data", DLIO_FIELD(int64_t, model.parallelism.data),
          "data-parallel degree of the emulated job for checkpoint.mode subset; in default mode "
          "it is world / (tensor x pipeline) and a different value here only warns (-1 = derive)",
          -1));
  add(Uint("model.parallelism.zero_stage", DLIO_FIELD(uint64_t, model.parallelism.zero_stage),
           "DeepSpeed ZeRO stage 0-3: 0 = only the first tensor x pipeline ranks checkpoint; "
           "1 and 2 = optimizer sharded over data-parallel ranks, model written by data-parallel "
           "rank 0; 3 = model and optimizer sharded over data-parallel ranks"));
  add(Uint("model.transformer.vocab_size", DLIO_FIELD(uint64_t, model.transformer.vocab_size),
           "vocabulary size (embedding and lm_head are vocab_size x hidden_size)"));
  add(Uint("model.transformer.hidden_size", DLIO_FIELD(uint64_t, model.transformer.hidden_size),
           "hidden size"));
  add(Uint("model.transformer.ffn_hidden_size",
           DLIO_FIELD(uint64_t, model.transformer.ffn_hidden_size),
           "feed-forward hidden size (gated: the up projection is 2 x ffn_hidden_size wide)"));
  add(Uint("model.transformer.num_attention_heads",
           DLIO_FIELD(uint64_t, model.transformer.num_attention_heads),
           "attention heads (head size = hidden_size / num_attention_heads, rounded down)"));
  add(Uint("model.transformer.num_kv_heads", DLIO_FIELD(uint64_t, model.transformer.num_kv_heads),
           "key/value heads (grouped-query attention: K and V are num_kv_heads x head size wide)"));

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

  // dataset
  add(String("dataset.data_folder", DLIO_FIELD(std::string, dataset.data_folder),
             "dataset root; train files go to `data_folder/train`, eval files to "
             "`data_folder/valid` (trailing '/' removed)",
             kStripSlash));
  add(String("dataset.format", DLIO_FIELD(std::string, dataset.format),
             "file format, a Format registry name (npz, npy, hdf5, tfrecord, csv, "
             "indexed_binary, ...); checked at run time against the registered formats"));
  add(String("dataset.file_prefix", DLIO_FIELD(std::string, dataset.file_prefix),
             "file name prefix: `prefix_i_of_n.ext`"));
  add(Uint("dataset.num_files_train", DLIO_FIELD(uint64_t, dataset.num_files_train),
           "number of training files"));
  add(Uint("dataset.num_files_eval", DLIO_FIELD(uint64_t, dataset.num_files_eval),
           "number of evaluation files"));
  add(Uint("dataset.num_samples_per_file", DLIO_FIELD(uint64_t, dataset.num_samples_per_file),
           "samples (records) per file"));
  add(Uint("dataset.record_length_bytes", DLIO_FIELD(uint64_t, dataset.record_length_bytes),
           "mean bytes per sample (fractions are rounded)", kSizeUnits | kRoundFraction));
  add(Alias("dataset.record_length", "dataset.record_length_bytes"));
  add(Uint("dataset.record_length_bytes_stdev",
           DLIO_FIELD(uint64_t, dataset.record_length_bytes_stdev),
           "standard deviation of the sample size in bytes (normal, clipped at 1)",
           kSizeUnits | kRoundFraction));
  add(Alias("dataset.record_length_stdev", "dataset.record_length_bytes_stdev"));
  add(Uint("dataset.record_length_bytes_resize",
           DLIO_FIELD(uint64_t, dataset.record_length_bytes_resize),
           "bytes of a sample after DLIO's resize transform (0 = none); DLIO hands the loader "
           "a pre-made array of this size, with no I/O effect, so dlio only records it",
           kSizeUnits | kRoundFraction));
  add(Alias("dataset.record_length_resize", "dataset.record_length_bytes_resize"));
  add(Uint("dataset.num_subfolders_train", DLIO_FIELD(uint64_t, dataset.num_subfolders_train),
           "spread training files over this many subfolders (0 = none)"));
  add(Uint("dataset.num_subfolders_eval", DLIO_FIELD(uint64_t, dataset.num_subfolders_eval),
           "spread evaluation files over this many subfolders (0 = none)"));
  add(Bool("dataset.enable_chunking", DLIO_FIELD(bool, dataset.enable_chunking),
           "write chunked datasets (hdf5)"));
  add(Uint("dataset.chunk_size", DLIO_FIELD(uint64_t, dataset.chunk_size),
           "chunk size in bytes when enable_chunking", kSizeUnits));
  add(Uint("dataset.chunk_samples", DLIO_FIELD(uint64_t, dataset.chunk_samples),
           "samples per chunk when enable_chunking (0 = derive from chunk_size)"));
  add(Enum("dataset.compression", DLIO_FIELD(std::string, dataset.compression),
           {"none", "gzip", "zlib", "deflate", "lzf", "szip", "bz2", "zip", "xz"},
           "compression of generated files; each format rejects the ones it cannot write "
           "(npz: none, gzip/zlib/deflate; hdf5: also szip when the library has it)"));
  add(Bool("dataset.hdf5_shuffle", DLIO_FIELD(bool, dataset.hdf5_shuffle),
           "hdf5: apply the byte-shuffle filter before compression"));
  add(Bool(
      "dataset.metadata_file", DLIO_FIELD(bool, dataset.metadata_file),
      "hdf5: write a separate metadata file of per-sample offsets/sizes that readers consult"));
  add(Bool("dataset.csv_header", DLIO_FIELD(bool, dataset.csv_header),
           "csv: write a header line naming the columns"));
  add(Int32("dataset.image_quality", DLIO_FIELD(int, dataset.image_quality),
            "jpeg: encoder quality 1-100"));
  add(Bool("dataset.write_index", DLIO_FIELD(bool, dataset.write_index),
           "tfrecord: write <file>.idx (DALI-style record offsets) beside each file"));
  add(Int32("dataset.compression_level", DLIO_FIELD(int, dataset.compression_level),
            "compression level 0-9"));
  add(Bool("dataset.keep_files", DLIO_FIELD(bool, dataset.keep_files),
           "keep generated data after the run (dlio never deletes data it did not create)"));
  add(Unused("dataset.generation_buffer_size", "DLIO: generator buffer bytes"));
  add(Unused("dataset.record_element_bytes", "DLIO: bytes per element of a record"));
  add(Unused("dataset.record_element_type", "DLIO: element type of a record (uint8, ...)"));
  add(Unused("dataset.record_dims", "DLIO: record shape (list)"));
  add(Unused("dataset.hdf5", "DLIO: hdf5 layout map (chunk_dims, num_dset_per_record, max_shape)"));
  add(Unused("dataset.daos_pool", "DLIO: DAOS pool of the dataset"));
  add(Unused("dataset.daos_cont", "DLIO: DAOS container of the dataset"));
  add(Unused("dataset.eval_num_samples_per_file", "in DLIO's dlrm.yaml; DLIO ignores it"));

  // reader
  add(String("reader.data_loader", DLIO_FIELD(std::string, reader.data_loader),
             "loader being emulated (naming only): dlio, pytorch, tensorflow, dali, native_dali, "
             "synthetic, custom"));
  add(Enum("reader.pipeline", DLIO_FIELD(std::string, reader.pipeline),
           {"threaded", "sync", "preload"},
           "threaded: read/preprocess threads overlap I/O with compute; sync: I/O before each "
           "step, no overlap; preload: read everything into memory before training"));
  add(Uint("reader.batch_size", DLIO_FIELD(uint64_t, reader.batch_size),
           "samples per training step (per rank)"));
  add(Uint("reader.batch_size_eval", DLIO_FIELD(uint64_t, reader.batch_size_eval),
           "samples per evaluation step (per rank)"));
  add(Uint("reader.read_threads", DLIO_FIELD(uint64_t, reader.read_threads),
           "I/O threads per rank (0: read on the training thread)"));
  add(Uint("reader.computation_threads", DLIO_FIELD(uint64_t, reader.computation_threads),
           "preprocessing threads per rank"));
  add(Uint("reader.prefetch_size", DLIO_FIELD(uint64_t, reader.prefetch_size),
           "batches buffered ahead of the training loop"));
  add(Enum("reader.file_shuffle", DLIO_FIELD(std::string, reader.file_shuffle),
           {"off", "seed", "random"},
           "file order: off, seed (from train.seed), random (different every run)", ShuffleSetter));
  add(Enum("reader.sample_shuffle", DLIO_FIELD(std::string, reader.sample_shuffle),
           {"off", "seed", "random"}, "sample order within the rank's share, as file_shuffle",
           ShuffleSetter));
  add(Uint("reader.shuffle_size", DLIO_FIELD(uint64_t, reader.shuffle_size),
           "window of the shuffle-buffer sampler, in samples"));
  add(Enum("reader.sampler", DLIO_FIELD(std::string, reader.sampler),
           {"auto", "sequential", "shuffle", "shuffle_buffer"},
           "sampler; auto picks from file_shuffle/sample_shuffle: sequential when both are off; "
           "with data_loader tensorflow and sample_shuffle on, shuffle_buffer (tf.data's "
           "shuffle(reader.shuffle_size), as DLIO's TensorFlow loader); else shuffle"));
  add(Enum("reader.sharding", DLIO_FIELD(std::string, reader.sharding),
           {"block", "round_robin", "none"},
           "how samples are split over ranks: contiguous blocks, round robin, or none (every rank "
           "reads the whole dataset, as CANDLE does)"));
  add(Double("reader.read_fraction", DLIO_FIELD(double, reader.read_fraction),
             "share in (0, 1] of its planned samples a rank reads each epoch: the first "
             "ceil(fraction x n) of its (shuffled) order, e.g. 0.3333 for DFFN's ranks that each "
             "read a third of the data"));
  add(Uint("reader.file_interleave", DLIO_FIELD(uint64_t, reader.file_interleave),
           "read this many files at a time, one sample of each in turn, each file in order "
           "(tf.data's interleave cycle_length; Imagenet: 2); 0 or 1 = one file after another"));
  add(Uint("reader.transfer_size", DLIO_FIELD(uint64_t, reader.transfer_size),
           "bytes per read request (0 = a whole sample per request, DLIO's None)", kSizeUnits));
  add(Dist("reader.preprocess_time", DLIO_FIELD(DistributionSpec, reader.preprocess_time),
           "emulated preprocessing seconds per sample (number or distribution)"));
  add(DistStdev("reader.preprocess_time_stdev",
                DLIO_FIELD(DistributionSpec, reader.preprocess_time), "reader.preprocess_time"));
  add(Enum("reader.read_type", DLIO_FIELD(std::string, reader.read_type), {"on_demand", "memory"},
           "on_demand: read during training; memory: load the dataset first (sets reader.pipeline "
           "to preload)",
           ReadTypeSetter));
  add(Bool("reader.odirect", DLIO_FIELD(bool, reader.odirect),
           "O_DIRECT reads (transfer_size must be a multiple of 4096)"));
  add(Bool("reader.drop_last", DLIO_FIELD(bool, reader.drop_last), "drop a final partial batch"));
  add(Uint("reader.max_open_files", DLIO_FIELD(uint64_t, reader.max_open_files),
           "open file readers kept per rank"));
  add(Bool(
      "reader.verify_checksums", DLIO_FIELD(bool, reader.verify_checksums),
      "tfrecord: verify each record's CRC32C (a mismatch is an error naming file and offset)"));
  add(Bool("reader.use_index", DLIO_FIELD(bool, reader.use_index),
           "tfrecord: locate records through <file>.idx when it exists (else scan the file)"));
  add(Bool("reader.decode", DLIO_FIELD(bool, reader.decode),
           "decode samples on the preprocessing threads (jpeg/png pixels, csv float32 values)"));
  add(Bool("reader.reopen_files_each_epoch", DLIO_FIELD(bool, reader.reopen_files_each_epoch),
           "close every open file at each epoch start (loaders whose workers restart per epoch); "
           "false keeps up to max_open_files open across epochs"));
  add(Unused("reader.dont_use_mmap", "DLIO: read npy/npz without mmap"));
  add(Unused("reader.reader_classname", "DLIO: custom reader class"));
  add(Unused("reader.multiprocessing_context", "DLIO: fork/spawn for loader workers"));
  add(Unused("reader.data_loader_classname", "DLIO: custom data loader class"));
  add(Unused("reader.data_loader_sampler", "DLIO: iterative or index sampler"));
  add(Unused("reader.file_access", "DLIO: multi/shared file access"));
  add(Unused("reader.pin_memory", "DLIO: PyTorch pin_memory"));
  add(Unused("reader.transformed_record_dims", "DLIO: record shape after transform"));
  add(Unused("reader.transformed_record_element_type", "DLIO: element type after transform"));

  // train
  add(Uint("train.epochs", DLIO_FIELD(uint64_t, train.epochs), "training epochs"));
  add(Dist("train.computation_time", DLIO_FIELD(DistributionSpec, train.computation_time),
           "emulated compute seconds per step (number or distribution)"));
  add(DistStdev("train.computation_time_stdev",
                DLIO_FIELD(DistributionSpec, train.computation_time), "train.computation_time"));
  add(Enum("train.compute_emulator", DLIO_FIELD(std::string, train.compute), {"sleep", "spin"},
           "how compute time is taken: sleep, or spin (busy-wait, CPU-training emulation)"));
  add(Int("train.total_training_steps", DLIO_FIELD(int64_t, train.total_training_steps),
          "stop after this many steps (-1 = whole epochs)", -1));
  add(Uint("train.seed", DLIO_FIELD(uint64_t, train.seed),
           "seed of every random choice (shuffles, sizes, distributions)"));
  add(Bool("train.seed_change_epoch", DLIO_FIELD(bool, train.seed_change_epoch),
           "derive a different shuffle per epoch"));
  add(Uint("train.excluded_start_steps", DLIO_FIELD(uint64_t, train.excluded_start_steps),
           "warm-up steps per block left out of AU and throughput"));
  add(Bool("train.barrier_per_step", DLIO_FIELD(bool, train.barrier_per_step),
           "barrier across ranks after each step (all-reduce stand-in)"));
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

  // checkpoint
  add(String("checkpoint.checkpoint_folder", DLIO_FIELD(std::string, checkpoint.checkpoint_folder),
             "where checkpoints are written (trailing '/' removed)", kStripSlash));
  add(String("checkpoint.type", DLIO_FIELD(std::string, checkpoint.type),
             "checkpointer registry name: paper (five files: 2 x 1 KiB, 4 KiB, 64 KiB, 4 MiB), "
             "model (model_size_bytes), transformer (DLIO's layered LLM checkpoint from model.*), "
             "or auto: transformer when model.type is transformer or model.num_layers, "
             "layer_parameters or optimization_groups are set, else model when a model size is "
             "set, else paper. DLIO's location values rank_zero / all_ranks / independent set "
             "checkpoint.rank_mode instead",
             kNone, CheckpointTypeSetter));
  add(Uint("checkpoint.checkpoint_after_epoch",
           DLIO_FIELD(uint64_t, checkpoint.checkpoint_after_epoch),
           "first epoch after which to checkpoint"));
  add(Uint("checkpoint.epochs_between_checkpoints",
           DLIO_FIELD(uint64_t, checkpoint.epochs_between_checkpoints),
           "checkpoint every this many epochs (when steps_between_checkpoints is -1)"));
  add(Int("checkpoint.steps_between_checkpoints",
          DLIO_FIELD(int64_t, checkpoint.steps_between_checkpoints),
          "checkpoint every this many steps (-1 = use epochs_between_checkpoints)", -1));
  add(Uint("checkpoint.model_size_bytes", DLIO_FIELD(uint64_t, checkpoint.model_size_bytes),
           "bytes per checkpoint for type 'model' (0 = model.model_size_bytes)", kSizeUnits));
  add(Alias("checkpoint.model_size", "checkpoint.model_size_bytes"));
  add(Bool("checkpoint.fsync", DLIO_FIELD(bool, checkpoint.fsync),
           "fsync every checkpoint file and its folder"));
  add(Bool("checkpoint.read_back", DLIO_FIELD(bool, checkpoint.read_back),
           "read each checkpoint back after writing it"));
  add(Uint("checkpoint.transfer_size", DLIO_FIELD(uint64_t, checkpoint.transfer_size),
           "bytes per checkpoint write/read request", kSizeUnits));
  add(Enum("checkpoint.rank_mode", DLIO_FIELD(std::string, checkpoint.rank_mode), {"all", "root"},
           "all: every rank writes its share; root: only rank 0 writes"));
  add(Int("checkpoint.num_checkpoints_write", DLIO_FIELD(int64_t, checkpoint.num_checkpoints_write),
          "checkpoint-only runs (workflow.train false, workflow.checkpoint true): write this many "
          "checkpoints (-1 or 0 = none)",
          -1));
  add(Int("checkpoint.num_checkpoints_read", DLIO_FIELD(int64_t, checkpoint.num_checkpoints_read),
          "checkpoint-only runs: then read this many back, the first ones this run wrote, or with "
          "no writes the newest ones already in checkpoint_folder (-1 or 0 = none)",
          -1));
  add(Enum("checkpoint.mode", DLIO_FIELD(std::string, checkpoint.mode), {"default", "subset"},
           "default: the run's ranks are the whole job (data-parallel degree = world / (tensor x "
           "pipeline)); subset: they are the first ranks of a job of model.parallelism.data x "
           "tensor x pipeline ranks and write those ranks' shares"));
  add(Double("checkpoint.time_between_checkpoints",
             DLIO_FIELD(double, checkpoint.time_between_checkpoints),
             "checkpoint-only runs: seconds of emulated compute (train.compute_emulator) before "
             "each save and each load, outside the timing (<= 0 = none)"));
  add(Bool("checkpoint.rank_sync", DLIO_FIELD(bool, checkpoint.rank_sync),
           "checkpoint-only runs: a barrier after each save/load, inside its timing"));
  add(Uint("checkpoint.size_divisor", DLIO_FIELD(uint64_t, checkpoint.size_divisor),
           "divide every checkpoint file's size by this (rounded up, at least 1 byte), to run "
           "large checkpoint workloads (llama3_*) small; the file count and layout do not change"));
  add(Uint("checkpoint.model_files", DLIO_FIELD(uint64_t, checkpoint.model_files),
           "type 'model': files each writing rank splits its bytes into (L2HMC: 4)"));
  add(String("checkpoint.storage_type", DLIO_FIELD(std::string, checkpoint.storage_type),
             "storage registry name checkpoints are written through, e.g. stdio (fwrite, traced "
             "as STDIO); empty = storage.storage_type"));
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

  // side_io
  add(String("side_io.read_file", DLIO_FIELD(std::string, side_io.read_file),
             "file read beside the training data (metadata, stats); relative paths are under "
             "dataset.data_folder; empty = no side reads"));
  add(Uint("side_io.read_file_size", DLIO_FIELD(uint64_t, side_io.read_file_size),
           "bytes of the side file the generate phase creates when it is missing (0 = it must "
           "exist)",
           kSizeUnits));
  add(String("side_io.read_file_format", DLIO_FIELD(std::string, side_io.read_file_format),
             "raw (seeded bytes) or a Format registry name whose writer stores one sample of "
             "read_file_size bytes (e.g. hdf5)"));
  add(Uint("side_io.read_size", DLIO_FIELD(uint64_t, side_io.read_size), "bytes per side read",
           kSizeUnits));
  add(Uint("side_io.reads", DLIO_FIELD(uint64_t, side_io.reads),
           "side reads per training step (per_step) or in the whole run (spread, "
           "before_training)"));
  add(Enum("side_io.schedule", DLIO_FIELD(std::string, side_io.schedule),
           {"per_step", "spread", "before_training"},
           "per_step: before every training step; spread: at seeded random steps over the run; "
           "before_training: all before the first epoch"));
  add(Enum("side_io.access", DLIO_FIELD(std::string, side_io.access), {"random", "sequential"},
           "offsets of side reads: seeded random, or consecutive (wrapping at the end)"));
  add(Uint("side_io.write_bytes", DLIO_FIELD(uint64_t, side_io.write_bytes),
           "bytes every rank writes to side_io.write_file after training (0 = none)", kSizeUnits));
  add(String("side_io.write_file", DLIO_FIELD(std::string, side_io.write_file),
             "name of the end-of-run file under output.folder; {rank} is replaced by the rank; a "
             ".json name gets valid JSON content"));
  add(Uint("side_io.write_request_size", DLIO_FIELD(uint64_t, side_io.write_request_size),
           "bytes per end-of-run write request (0 = the whole file in one request)", kSizeUnits));

  // output
  add(String("output.folder", DLIO_FIELD(std::string, output.folder),
             "where summary.json, per-rank stats, logs and traces go"));
  add(String("output.log_file", DLIO_FIELD(std::string, output.log_file),
             "log file name inside output.folder"));
  add(Enum("output.log_level", DLIO_FIELD(std::string, output.log_level),
           {"debug", "info", "warn", "error"}, "log verbosity (warning and critical also accepted)",
           LogLevelSetter));
  add(Bool("output.trace", DLIO_FIELD(bool, output.trace),
           "write `trace-RANK.pfw` (DFTracer/Chrome trace events)"));
  add(Bool("output.trace_gzip", DLIO_FIELD(bool, output.trace_gzip),
           "gzip the trace: `trace-RANK.pfw.gz`"));
  add(Bool("output.progress", DLIO_FIELD(bool, output.progress),
           "progress line when stderr is a terminal"));
  add(Alias("output.metric.exclude_start_steps", "train.excluded_start_steps"));
  add(Unused("output.metric.exclude_end_steps", "DLIO: steps left out at the end of a block"));

  // metric
  add(Double("metric.au", DLIO_FIELD(double, metric.au),
             "accelerator-utilisation target in (0, 1]; summary.json says whether it was met"));
  add(Enum("metric.mlperf_rules", DLIO_FIELD(std::string, metric.mlperf_rules),
           {"auto", "on", "off"},
           "MLPerf Storage training rules: warn when an epoch has fewer than 500 steps (the "
           "dataset-smaller-than-5x-memory warning applies to every training run); auto = on "
           "when model.name is unet3d, resnet50 or cosmoflow"));

  // storage
  add(String("storage.storage_type", DLIO_FIELD(std::string, storage.storage_type),
             "storage registry name: posix (DLIO's local_fs maps here), memory, slow, mpiio; "
             "others are checked at run time",
             kNone, StorageTypeSetter));
  add(String("storage.storage_root", DLIO_FIELD(std::string, storage.storage_root),
             "prefix of relative data and checkpoint folders (DLIO's namespace)"));
  add(String("storage.slow_inner", DLIO_FIELD(std::string, storage.slow_inner),
             "slow: the storage it wraps"));
  add(Double("storage.slow_latency_us", DLIO_FIELD(double, storage.slow_latency_us),
             "slow: mean latency added to every read/write, microseconds"));
  add(Double("storage.slow_latency_stdev_us", DLIO_FIELD(double, storage.slow_latency_stdev_us),
             "slow: normal jitter of that latency, microseconds (clipped at 0)"));
  add(Double("storage.slow_bandwidth_mib_s", DLIO_FIELD(double, storage.slow_bandwidth_mib_s),
             "slow: bandwidth cap in MiB/s (2^20 bytes/s); 0 = unlimited"));
  add(Bool("storage.mpiio_collective", DLIO_FIELD(bool, storage.mpiio_collective),
           "mpiio: collective reads (MPI_File_read_at_all) of the data files, opened on all "
           "ranks; needs one shared file, reader.pipeline sync with read_threads <= 1, drop_last "
           "(docs/scaling.md)"));
  add(Unused("storage.storage_options", "DLIO: object-store options map (s3 endpoint, keys, ...)"));
  add(Unused("storage.fsspec_plugin", "DLIO: fsspec backend name"));
  add(Unused("storage.fsspec_extra_params", "DLIO: fsspec parameters map"));

  // profiling (DLIO)
  add(Unused("profiling.profiler", "DLIO: iostat, darshan, dftracer, ... (use output.trace)"));
  add(Unused("profiling.iostat_devices", "DLIO: devices for iostat"));
  add(Unused("logging", "in DLIO's s3dlio configs (logging.verbosity); DLIO ignores it"));
  return t;
}

#undef DLIO_FIELD

}  // namespace

const std::vector<KeySpec>& KeyTable() {
  static const std::vector<KeySpec> table = BuildTable();
  return table;
}

}  // namespace dlio::config_internal
