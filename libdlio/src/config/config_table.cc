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
             "`data_folder/valid` (trailing '/' removed); DLIO's `s3://bucket/prefix` names the "
             "bucket (not prefixed with storage.storage_root)",
             kStripSlash | kNonEmpty));
  add(String("dataset.format", DLIO_FIELD(std::string, dataset.format),
             "file format, a Format registry name (npz, npy, hdf5, tfrecord, csv, "
             "indexed_binary, ...); checked at run time against the registered formats",
             kNonEmpty));
  add(String("dataset.file_prefix", DLIO_FIELD(std::string, dataset.file_prefix),
             "file name prefix: `prefix_i_of_n.ext`", kNonEmpty));
  add(Uint("dataset.num_files_train", DLIO_FIELD(uint64_t, dataset.num_files_train), {0, k4Gi},
           "number of training files: a run reads the first ones of `data_folder/train` sorted "
           "by name (more may be there; docs/formats.md)"));
  add(Uint("dataset.num_files_eval", DLIO_FIELD(uint64_t, dataset.num_files_eval), {0, k4Gi},
           "number of evaluation files: a run reads the first ones of `data_folder/valid` "
           "sorted by name"));
  add(Uint("dataset.num_samples_per_file", DLIO_FIELD(uint64_t, dataset.num_samples_per_file),
           {1, kTiB}, "samples (records) per file"));
  add(Uint("dataset.record_length_bytes", DLIO_FIELD(uint64_t, dataset.record_length_bytes),
           {1, kTiB}, "mean bytes per sample (fractions are rounded)",
           kSizeUnits | kRoundFraction));
  add(Alias("dataset.record_length", "dataset.record_length_bytes"));
  add(Uint("dataset.record_length_bytes_stdev",
           DLIO_FIELD(uint64_t, dataset.record_length_bytes_stdev), {0, kTiB},
           "standard deviation of the sample size in bytes (normal, clipped at 1)",
           kSizeUnits | kRoundFraction));
  add(Alias("dataset.record_length_stdev", "dataset.record_length_bytes_stdev"));
  add(Uint("dataset.record_length_bytes_resize",
           DLIO_FIELD(uint64_t, dataset.record_length_bytes_resize), {0, kTiB},
           "bytes of a sample after DLIO's resize transform (0 = none); DLIO hands the loader "
           "a pre-made array of this size, with no I/O effect, so dlio only records it",
           kSizeUnits | kRoundFraction));
  add(Alias("dataset.record_length_resize", "dataset.record_length_bytes_resize"));
  add(Uint("dataset.num_subfolders_train", DLIO_FIELD(uint64_t, dataset.num_subfolders_train),
           {0, k4Gi}, "spread training files over this many subfolders (0 = none)"));
  add(Uint("dataset.num_subfolders_eval", DLIO_FIELD(uint64_t, dataset.num_subfolders_eval),
           {0, k4Gi}, "spread evaluation files over this many subfolders (0 = none)"));
  add(Bool("dataset.enable_chunking", DLIO_FIELD(bool, dataset.enable_chunking),
           "write chunked datasets (hdf5)"));
  add(Uint("dataset.chunk_size", DLIO_FIELD(uint64_t, dataset.chunk_size), {0, k4Gi},
           "chunk size in bytes when enable_chunking", kSizeUnits));
  add(Uint("dataset.chunk_samples", DLIO_FIELD(uint64_t, dataset.chunk_samples), {0, k4Gi},
           "samples per chunk when enable_chunking (0 = derive from chunk_size)"));
  add(Choice("dataset.compression", DLIO_FIELD(std::string, dataset.compression),
             {"none", "gzip", "zlib", "deflate", "lzf", "szip", "bz2", "zip", "xz", "snappy",
              "zstd", "lz4"},
             "compression of generated files; each format rejects the ones it cannot write "
             "(npz: none, gzip/zlib/deflate; hdf5: also szip when the library has it; tfrecord: "
             "none, gzip, zlib/deflate around the whole file, as TFRecordWriter; parquet: none, "
             "snappy, gzip, zstd per page)"));
  add(Bool("dataset.hdf5_shuffle", DLIO_FIELD(bool, dataset.hdf5_shuffle),
           "hdf5: apply the byte-shuffle filter before compression"));
  add(Bool(
      "dataset.metadata_file", DLIO_FIELD(bool, dataset.metadata_file),
      "hdf5: write a separate metadata file of per-sample offsets/sizes that readers consult"));
  add(Uint("dataset.hdf5_lookup_rows", DLIO_FIELD(uint64_t, dataset.hdf5_lookup_rows),
           {0, uint64_t{1} << 24},
           "hdf5: rows of a small table /lookup written in every file, a coordinates table for "
           "reader.hdf5_lookup_dataset: /lookup (0 = none; other formats refuse it)"));
  add(Uint("dataset.hdf5_lookup_row_bytes", DLIO_FIELD(uint64_t, dataset.hdf5_lookup_row_bytes),
           {1, uint64_t{1} << 20},
           "hdf5: bytes per row of /lookup, a contiguous uint8 table of rows x bytes"));
  add(Bool("dataset.csv_header", DLIO_FIELD(bool, dataset.csv_header),
           "csv: write a header line naming the columns"));
  add(Int32("dataset.image_quality", DLIO_FIELD(int, dataset.image_quality), {1, 100},
            "jpeg: encoder quality 1-100"));
  add(Bool("dataset.write_index", DLIO_FIELD(bool, dataset.write_index),
           "tfrecord: write <file>.idx (DALI-style record offsets) beside each file"));
  add(Uint("dataset.parquet.row_group_size", DLIO_FIELD(uint64_t, dataset.parquet_row_group_size),
           {1, uint64_t{1} << 31}, "parquet: rows per row group of generated files"));
  add(ParquetColumns("dataset.parquet.columns",
                     DLIO_FIELD(std::vector<ParquetColumnConfig>, dataset.parquet_columns),
                     "parquet: the columns, a list of {name, dtype (uint8..uint64, int8..int64, "
                     "float16/32/64, binary, string; default float32), size (values per row, "
                     "default 1; > 1 is a fixed-size list), read (default true: readers read "
                     "the column's chunks)}; empty: one column 'data' of the sample's bytes"));
  add(Choice("dataset.parquet.read_mode", DLIO_FIELD(std::string, dataset.parquet_read_mode),
             {"default", "row_group"},
             "parquet: default or row_group; both read a sample's whole row group (the selected "
             "columns' chunks) and keep the last 4 decoded row groups per open file"));
  add(String("dataset.parquet.partition_by", DLIO_FIELD(std::string, dataset.parquet_partition_by),
             "parquet: hive partitioning column; only empty (none) is supported"));
  add(Uint("dataset.parquet.generation_batch_size",
           DLIO_FIELD(uint64_t, dataset.parquet_generation_batch_size),
           "parquet: the Python generator's rows per write batch (0 = row_group_size); accepted, "
           "does not change the files (dlio writes page by page)"));
  add(Enum("dataset.sample_layout", DLIO_ENUM_FIELD(SampleLayout, dataset.sample_layout),
           "npy/npz: the axis of x that indexes samples in generated files, and for reading "
           "when neither the labels' length nor num_samples_per_file tells: first_axis (x[i], "
           "dlio's layout) or last_axis (x[..., i], the Python DLIO's (dim, dim, num_samples))"));
  add(Int32("dataset.compression_level", DLIO_FIELD(int, dataset.compression_level), {0, 9},
            "compression level 0-9"));
  add(Bool("dataset.keep_files", DLIO_FIELD(bool, dataset.keep_files),
           "false: a run that generates and trains removes, at its end, the dataset files (and "
           "companions) it generated itself; files present before it, the marker and folders "
           "stay (dlio never deletes data it did not create)"));
  add(Unused("dataset.generation_buffer_size", "DLIO: generator buffer bytes"));
  add(Unused("dataset.record_element_bytes", "DLIO: bytes per element of a record"));
  add(UintList("dataset.record_dims", DLIO_FIELD(std::vector<uint64_t>, dataset.record_dims),
               "DLIO's record shape ([] = none): when given, a sample is an array of these "
               "dimensions of record_element_type and record_length_bytes is their product x the "
               "item size (npy/npz/hdf5 write that shape and dtype; a csv row holds their "
               "product of values)"));
  add(Choice("dataset.record_element_type", DLIO_FIELD(std::string, dataset.record_element_type),
             ElementTypeNames(),
             "numpy element type of a record (the npy/npz/hdf5 dtype; jpeg/png: always uint8)"));
  add(Unused("dataset.hdf5", "DLIO: hdf5 layout map (chunk_dims, max_shape)"));
  add(Uint("dataset.hdf5.num_dset_per_record",
           DLIO_FIELD(uint64_t, dataset.hdf5_num_dset_per_record), {1, 1024},
           "hdf5: DLIO's datasets per record /records_0..N-1, written and read as DLIO does "
           "(it must divide record_dims[0]; N > 1 needs record_dims)"));
  add(Unused("dataset.daos_pool", "DLIO: DAOS pool of the dataset"));
  add(Unused("dataset.daos_cont", "DLIO: DAOS container of the dataset"));
  add(Unused("dataset.eval_num_samples_per_file", "in DLIO's dlrm.yaml; DLIO ignores it"));

  // reader
  add(String("reader.data_loader", DLIO_FIELD(std::string, reader.data_loader),
             "loader being emulated: dlio, pytorch, tensorflow, dali, native_dali, synthetic, "
             "custom; pytorch reads with DataLoader worker processes under reader.io_model auto "
             "(docs/io_models.md), tensorflow picks the shuffle_buffer sampler under "
             "reader.sampler auto"));
  add(Choice("reader.pipeline", DLIO_FIELD(std::string, reader.pipeline),
             {"threaded", "sync", "preload"},
             "threaded: read/preprocess threads overlap I/O with compute; sync: I/O before each "
             "step, no overlap; preload: read everything into memory before training"));
  add(Uint("reader.batch_size", DLIO_FIELD(uint64_t, reader.batch_size), {1, 1 << 24},
           "samples per training step (per rank)"));
  add(Uint("reader.batch_size_eval", DLIO_FIELD(uint64_t, reader.batch_size_eval), {1, 1 << 24},
           "samples per evaluation step (per rank)"));
  add(Uint("reader.read_threads", DLIO_FIELD(uint64_t, reader.read_threads), {0, 1024},
           "I/O threads per rank (0: read on the training thread)"));
  add(Int("reader.thread_nice", DLIO_FIELD(int64_t, reader.thread_nice), {-1, 19},
          "added to the nice value of the read and preprocessing threads (pytorch: worker "
          "processes), so training threads wake on time from compute on an oversubscribed host; "
          "-1 (auto) = 10 when train.accelerators_per_process > 1, else 0"));
  add(Uint("reader.computation_threads", DLIO_FIELD(uint64_t, reader.computation_threads),
           {0, 1024}, "preprocessing threads per rank"));
  add(Uint("reader.prefetch_size", DLIO_FIELD(uint64_t, reader.prefetch_size), {0, 1 << 20},
           "batches buffered ahead of the training loop"));
  add(Enum("reader.file_shuffle", DLIO_ENUM_FIELD(ShuffleMode, reader.file_shuffle),
           "file order: off, seed (from train.seed), random (different every run); webdataset: "
           "the shard order (WebDataset's shardshuffle)",
           ShuffleSetter));
  add(Enum("reader.sample_shuffle", DLIO_ENUM_FIELD(ShuffleMode, reader.sample_shuffle),
           "sample order within the rank's share, as file_shuffle", ShuffleSetter));
  add(Uint("reader.shuffle_size", DLIO_FIELD(uint64_t, reader.shuffle_size), {0, k4Gi},
           "window of the shuffle-buffer sampler, in samples (webdataset: WebDataset's "
           "shuffle(N) buffer, with sample_shuffle on)"));
  add(Choice("reader.sampler", DLIO_FIELD(std::string, reader.sampler),
             {"auto", "sequential", "shuffle", "shuffle_buffer"},
             "sampler; auto picks from file_shuffle/sample_shuffle: sequential when both are off; "
             "with data_loader tensorflow and sample_shuffle on, shuffle_buffer (tf.data's "
             "shuffle(reader.shuffle_size), as DLIO's TensorFlow loader); else shuffle. Under "
             "io_model tf.data a sample shuffle is shuffle_buffer applied after the reads, so "
             "files are read front to back"));
  add(Enum("reader.sharding", DLIO_ENUM_FIELD(Sharding, reader.sharding),
           "how samples are split over ranks: contiguous blocks, round robin, none (every rank "
           "reads the whole dataset, as CANDLE does), or shard (whole files dealt round-robin, "
           "WebDataset's split_by_node; webdataset always uses it unless none)"));
  add(Double("reader.read_fraction", DLIO_FIELD(double, reader.read_fraction),
             {0, 1, /*min_exclusive=*/true},
             "share in (0, 1] of its planned samples a rank reads each epoch: the first "
             "ceil(fraction x n) of its (shuffled) order, e.g. 0.3333 for DFFN's ranks that each "
             "read a third of the data"));
  add(Uint("reader.file_interleave", DLIO_FIELD(uint64_t, reader.file_interleave), {0, k4Gi},
           "read this many files at a time, one sample of each in turn, each file in order "
           "(tf.data's interleave cycle_length; Imagenet: 2); 0 or 1 = one file after another "
           "(webdataset: 0 = read_threads shards at a time)"));
  add(Uint("reader.transfer_size", DLIO_FIELD(uint64_t, reader.transfer_size), {0, kGiB},
           "bytes per read request (0 = a whole sample per request, DLIO's None)", kSizeUnits));
  add(Dist("reader.preprocess_time", DLIO_FIELD(DistributionSpec, reader.preprocess_time),
           "emulated preprocessing seconds per sample (number or distribution)"));
  add(DistStdev("reader.preprocess_time_stdev",
                DLIO_FIELD(DistributionSpec, reader.preprocess_time), "reader.preprocess_time"));
  add(Enum("reader.read_type", DLIO_ENUM_FIELD(ReadType, reader.read_type),
           "on_demand: read during training; memory: load the dataset first (sets reader.pipeline "
           "to preload)",
           ReadTypeSetter));
  add(Bool("reader.odirect", DLIO_FIELD(bool, reader.odirect),
           "O_DIRECT reads (transfer_size must be a multiple of 4096)"));
  add(Bool("reader.drop_last", DLIO_FIELD(bool, reader.drop_last), "drop a final partial batch"));
  add(Uint("reader.max_open_files", DLIO_FIELD(uint64_t, reader.max_open_files), {1, 1 << 20},
           "open file readers kept per rank"));
  add(Bool(
      "reader.verify_checksums", DLIO_FIELD(bool, reader.verify_checksums),
      "tfrecord: verify each record's CRC32C (a mismatch is an error naming file and offset)"));
  add(Bool("reader.use_index", DLIO_FIELD(bool, reader.use_index),
           "tfrecord under io_model native: locate records through <file>.idx when it exists "
           "(else scan the file); tf.data opens no index"));
  add(Bool("reader.decode", DLIO_FIELD(bool, reader.decode),
           "decode samples on the preprocessing threads (jpeg/png pixels, csv float32 values)"));
  add(Uint("reader.max_decoded_bytes", DLIO_FIELD(uint64_t, reader.max_decoded_bytes),
           {1, uint64_t{1} << 50},
           "with decode: a jpeg/png image larger than this once decoded is refused from its "
           "header, before anything is allocated (decompression bombs); the error names the file",
           kSizeUnits));
  add(Bool("reader.reopen_files_each_epoch", DLIO_FIELD(bool, reader.reopen_files_each_epoch),
           "close every open file at each epoch start (loaders whose workers restart per epoch); "
           "false keeps up to max_open_files open across epochs (not on the tiered storage, "
           "which always reopens: docs/caching.md)"));
  add(Enum(
      "reader.io_model", DLIO_ENUM_FIELD(IoModel, reader.io_model),
      "whose requests readers send to the file system (docs/io_models.md): auto = the "
      "format's framework model (native for a format that declares none); native = dlio's "
      "own (a sample or transfer_size per request); numpy, h5py, tf.data, mmap, pandas, tarfile, pyarrow = "
      "what that Python stack sends, request for request; pytorch = auto's requests, read "
      "by DataLoader worker processes; a model the format does not implement is refused"));
  add(Choice("reader.pyarrow_read", DLIO_FIELD(std::string, reader.pyarrow_read),
             {"fork", "columns", "pre_buffer"},
             "io_model pyarrow: how a row group is read after pyarrow's footer reads: fork = "
             "one Python buffered read of the selected chunks' span (the MLPerf fork's file "
             "reader); columns = one read per selected chunk (ParquetFile.read_row_group); "
             "pre_buffer = those chunks coalesced (holes <= 8 KiB, ranges <= 32 MiB)"));
  add(Enum("reader.client_costs", DLIO_ENUM_FIELD(ClientCosts, reader.client_costs),
           "what a framework io_model costs the client (docs/io_models.md): none = the "
           "model's exact requests (sizes, offsets, order, opens, concurrency) read into dlio's "
           "own reused, pre-touched buffers, with no CRC pass, Python-like copy or fresh "
           "shared memory per batch; framework = also the framework's client work (np.load's "
           "fresh array, its copies and zipfile's CRC-32, the pytorch workers' read buffers and "
           "collate copy). Under both, a pytorch worker's batch holds at most "
           "dataset.record_length_bytes_resize bytes per sample when that is set, as DLIO's "
           "loader hands PyTorch"));
  add(Bool("reader.persistent_workers", DLIO_FIELD(bool, reader.persistent_workers),
           "pytorch io_model: keep the DataLoader worker processes across epochs (as DLIO's "
           "PyTorch loader asks); false forks them at every epoch and ends them when it is read"));
  add(Choice("reader.h5py_reopen", DLIO_FIELD(std::string, reader.h5py_reopen),
             {"file", "dataset", "none"},
             "hdf5 under io_model h5py: what is opened again for every sample: file = "
             "h5py.File and f['records'] per sample, closed after it (DLIO's on_demand reader); "
             "dataset = the file stays open, f['records'] per sample; none = the file and its "
             "datasets stay open (libhdf5's sieve buffer and chunk cache then serve repeats)"));
  add(String("reader.hdf5_lookup_dataset", DLIO_FIELD(std::string, reader.hdf5_lookup_dataset),
             "hdf5 under io_model h5py: a small dataset of each file (e.g. /labels, a "
             "coordinates table) whose row (i mod its length) is read before sample i, as "
             "h5py reads it; empty = none"));
  add(Unused("reader.dont_use_mmap", "DLIO: read npy/npz without mmap"));
  add(Unused("reader.reader_classname", "DLIO: custom reader class"));
  add(Unused("reader.multiprocessing_context", "DLIO: fork/spawn for loader workers"));
  add(Unused("reader.data_loader_classname", "DLIO: custom data loader class"));
  add(Unused("reader.data_loader_sampler", "DLIO: iterative or index sampler"));
  add(Unused("reader.file_access", "DLIO: multi/shared file access"));
  add(Unused("reader.pin_memory", "DLIO: PyTorch pin_memory"));
  add(UintList(
      "reader.transformed_record_dims",
      DLIO_FIELD(std::vector<uint64_t>, reader.transformed_record_dims),
      "DLIO's shape of a sample after its transform ([] = none): sets "
      "dataset.record_length_bytes_resize to its bytes (what the loader is handed; no I/O)"));
  add(Choice("reader.transformed_record_element_type",
             DLIO_FIELD(std::string, reader.transformed_record_element_type), ElementTypeNames(),
             "numpy element type after the transform"));

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
  add(Choice("train.barrier_wait", DLIO_FIELD(std::string, train.barrier_wait), {"sleep", "spin"},
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

  // checkpoint
  add(String("checkpoint.checkpoint_folder", DLIO_FIELD(std::string, checkpoint.checkpoint_folder),
             "where checkpoints are written (trailing '/' removed)", kStripSlash | kNonEmpty));
  add(String("checkpoint.type", DLIO_FIELD(std::string, checkpoint.type),
             "checkpointer registry name: paper (five files: 2 x 1 KiB, 4 KiB, 64 KiB, 4 MiB), "
             "model (model_size_bytes), transformer (DLIO's layered LLM checkpoint from model.*), "
             "torch_save (the file and write requests of torch.save for "
             "checkpoint.torch_state_dict), dlio_benchmark (DLIO's global_epoch<e>_step<s> "
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
  add(Bool("checkpoint.read_back", DLIO_FIELD(bool, checkpoint.read_back),
           "read each checkpoint back after writing it"));
  add(Uint("checkpoint.transfer_size", DLIO_FIELD(uint64_t, checkpoint.transfer_size), {1, kGiB},
           "bytes per checkpoint write/read request", kSizeUnits));
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
  add(Uint("checkpoint.model_files", DLIO_FIELD(uint64_t, checkpoint.model_files), {1, 1 << 16},
           "type 'model': files each writing rank splits its bytes into (L2HMC: 4)"));
  add(String("checkpoint.storage_type", DLIO_FIELD(std::string, checkpoint.storage_type),
             "storage registry name checkpoints are written through, e.g. stdio (fwrite, traced "
             "as STDIO); empty = storage.storage_type"));
  add(String(
      "checkpoint.torch_state_dict", DLIO_FIELD(std::string, checkpoint.torch_state_dict),
      "type 'torch_save': the state dict torch.save writes, as name:shape[:dtype] items "
      "separated by commas (e.g. 'fc.weight:10x7, fc.bias:10'; shape 'scalar' or empty = "
      "0-dim; dtype fp32 (default), fp16, bf16, fp64, int8, uint8, int16, int32, int64, bool)"));
  add(String("checkpoint.torch_modules", DLIO_FIELD(std::string, checkpoint.torch_modules),
             "type 'torch_save': the modules of state_dict()'s _metadata after the root, as "
             "name[=version] items separated by commas; empty = every dotted prefix of the "
             "tensor names, version 1; 'none' = a plain OrderedDict without _metadata"));
  add(String("checkpoint.torch_file_name", DLIO_FIELD(std::string, checkpoint.torch_file_name),
             "type 'torch_save': the file's name in each checkpoint folder, {rank} standing for "
             "the rank; its stem is the zip's archive folder, whose length sets the header and "
             "central directory sizes (dlio-run fit copies the traced name)",
             kNonEmpty));
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
  add(Uint("side_io.read_file_size", DLIO_FIELD(uint64_t, side_io.read_file_size), {0, kTiB},
           "bytes of the side file the generate phase creates when it is missing (0 = it must "
           "exist)",
           kSizeUnits));
  add(String("side_io.read_file_format", DLIO_FIELD(std::string, side_io.read_file_format),
             "raw (seeded bytes) or a Format registry name whose writer stores one sample of "
             "read_file_size bytes (e.g. hdf5)"));
  add(Uint("side_io.read_size", DLIO_FIELD(uint64_t, side_io.read_size), {0, kGiB},
           "bytes per side read", kSizeUnits));
  add(Uint("side_io.reads", DLIO_FIELD(uint64_t, side_io.reads), {0, 1 << 24},
           "side reads per training step (per_step) or in the whole run (spread, "
           "before_training)"));
  add(Enum("side_io.schedule", DLIO_ENUM_FIELD(SideIoSchedule, side_io.schedule),
           "per_step: before every training step; spread: at seeded random steps over the run; "
           "before_training: all before the first epoch"));
  add(Enum("side_io.access", DLIO_ENUM_FIELD(SideIoAccess, side_io.access),
           "offsets of side reads: seeded random, or consecutive (wrapping at the end)"));
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

  AddStorageKeys(&t);

  // profiling (DLIO)
  add(Choice("profiling.profiler", DLIO_FIELD(std::string, profiling.profiler),
             {"none", "iostat", "darshan", "tensorboard"},
             "with workflow.profiling: iostat runs `iostat -mdxtcy -o JSON 1` on rank 0 into "
             "output.folder/iostat.json (DLIO's default; dlio's is none); darshan and tensorboard "
             "are accepted and not run (use output.trace)"));
  add(Unused("profiling.iostat_devices", "DLIO: devices for iostat (dlio's iostat reports all)"));
  add(Unused("logging", "in DLIO's s3dlio configs (logging.verbosity); DLIO ignores it"));
  return t;
}

}  // namespace

const std::vector<KeySpec>& KeyTable() {
  static const std::vector<KeySpec> table = BuildTable();
  return table;
}

}  // namespace dlio::config_internal
