// The reader section of the key table: how the data is read (docs/configuration.md).
#include "config/config_table.h"
#include "config/key_builders.h"
#include "core/element_type.h"

namespace dlio::config_internal {
namespace {

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

}  // namespace

void AddReaderKeys(std::vector<KeySpec>* t) {
  auto add = [t](KeySpec k) { t->push_back(std::move(k)); };

  // reader
  add(Enum("reader.data_loader", DLIO_ENUM_FIELD(DataLoader, reader.data_loader),
           "loader being emulated (dlio's own, or one of DLIO's); pytorch reads with DataLoader "
           "worker processes under reader.io_model auto (docs/io_models.md), tensorflow picks "
           "the shuffle_buffer sampler under reader.sampler auto; the others read with dlio's "
           "reader threads"));
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
  AddTfrecordReaderKeys(t);  // format/tfrecord/tfrecord_keys.cc
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
  add(Bool("reader.open_per_sample", DLIO_FIELD(bool, reader.open_per_sample),
           "open a sample's file for that sample alone and close it after (a Dataset whose "
           "__getitem__ opens the file: np.fromfile(path, offset=...), open-seek-read-close); "
           "false keeps files open (reader.max_open_files)"));
  add(Bool("reader.open_files_at_start", DLIO_FIELD(bool, reader.open_files_at_start),
           "each rank opens every file of the split once before the first epoch, reads what "
           "opening it to learn about it reads (h5py: the superblock and the sample dataset's "
           "header, and the root's attributes with reader.h5py_read_attributes) and closes it: a "
           "Dataset's __init__ counting samples (fastMRI's SliceDataset)"));
}

void AddReaderModelKeys(std::vector<KeySpec>* t) {
  auto add = [t](KeySpec k) { t->push_back(std::move(k)); };

  // reader: whose requests (I/O models) and their knobs; DLIO's keys dlio has no use for
  add(Enum("reader.io_model", DLIO_ENUM_FIELD(IoModel, reader.io_model),
           "whose requests readers send to the file system (docs/io_models.md): auto = the "
           "format's framework model (native for a format that declares none, and for jpeg "
           "and png); native = dlio's own (a sample or transfer_size per request); numpy, h5py, "
           "tf.data, mmap, pandas, tarfile, pyarrow, pil, tarfile_index, zipfile, torch_load = "
           "what that Python stack sends, request for request; pyio = a file read front to back "
           "through Python's buffered file in the calls reader.pyio_* give; pytorch = auto's "
           "requests, read "
           "by DataLoader worker processes; a model the format does not implement is refused"));
  add(Enum("reader.loader", DLIO_ENUM_FIELD(ReaderLoader, reader.loader),
           "who runs the reads (docs/io_models.md, \"Who reads\"): auto = as reader.io_model "
           "picks (pytorch: DataLoader worker processes; auto with reader.data_loader pytorch: "
           "worker processes where the pipeline overlaps I/O; else dlio's reader threads); "
           "threads = dlio's reader threads; pytorch_workers = DataLoader worker processes "
           "(reader.read_threads of them) reading with io_model's request model, each with its "
           "own open files and model state"));
  AddParquetReaderKeys(t);  // format/parquet/parquet_keys.cc
  // The pyio I/O model's own keys (io_models/pyio_keys.cc).
  AddPyioKeys(t);
  AddMmapKeys(t);              // the mmap I/O model's (io_models/mmap_keys.cc)
  AddWebdatasetReaderKeys(t);  // format/webdataset/webdataset_keys.cc
  AddNpzReaderKeys(t);         // format/npy_keys.cc
  add(Enum("reader.client_costs", DLIO_ENUM_FIELD(ClientCosts, reader.client_costs),
           "what a framework io_model costs the client (docs/io_models.md): none = the "
           "model's exact requests (sizes, offsets, order, opens, concurrency) read into dlio's "
           "own reused, pre-touched buffers, with no CRC pass, Python-like copy or fresh "
           "shared memory per batch; framework = also the framework's client work (np.load's "
           "fresh array, its copies and zipfile's CRC-32, the pytorch workers' read buffers and "
           "collate copy). Under both, a pytorch worker's batch holds at most "
           "dataset.record_length_bytes_resize bytes per sample when that is set, as DLIO's "
           "loader hands PyTorch"));
  add(Double("reader.fresh_page_share", DLIO_FIELD(double, reader.fresh_page_share), {0, 1},
             "the least share (0 to 1) of the pages reads of 16 KiB or more fill that fault "
             "in, zeroed by the kernel, within the read, as when a program reads each sample "
             "into new memory (docs/io_models.md, \"Fresh pages\"): dlio first drops pages of "
             "the destination until that share is out of memory (pages out already count). fit "
             "writes the traced share beside client_costs framework, or when the readers' "
             "first reads alone make 3%. Under either client_costs; 0 = none made fresh"));
  AddPytorchKeys(t);     // the pytorch pipeline's own key (pipeline/pytorch_keys.cc)
  AddHdf5ReaderKeys(t);  // format/hdf5/hdf5_keys.cc
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
}

}  // namespace dlio::config_internal
