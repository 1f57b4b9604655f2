// The I/O-model table: one entry per value of reader.io_model (docs/io_models.md,
// docs/architecture.md "The I/O models"). What a model is lives here, in one place: which request
// model it reads with, which loader it picks, the formats that serve it, the heap state its Python
// stack leaves, and how it adapts the sampler. The readers themselves live beside this file
// (numpy_model_reader, pyio/, pandas_read, hdf5_h5py_reader, tfrecord_stream_reader) and each
// format registers one per model it serves (model_readers.h).
//
// Adding a model: a value of IoModel (dlio/config_enums.h, with its spelling), one entry here,
// its reader in this folder, and one ModelReaders::Add line in each format that serves it (plus
// the model in that format's FormatCapabilities::io_models). io_model_table_test checks that the
// table, the declarations and the registrations agree.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "dlio/config_enums.h"

namespace dlio::io_models {

struct IoModelEntry {
  IoModel model = IoModel::kAuto;  // the reader.io_model value (EnumName(model) is its spelling)
  // The request model the value reads with: the model itself, or kAuto (the format's default
  // request model, FormatCapabilities::io_models) for the aliases auto and pytorch.
  IoModel request = IoModel::kAuto;
  // The loader the value picks: kPytorchWorkers for pytorch; kThreads for the others (under
  // auto, reader.data_loader pytorch may still pick the worker processes: PipelineNameFor).
  Loader loader = Loader::kThreads;
  // The built-in formats that serve it, each declaring it in FormatCapabilities::io_models and
  // registering a reader for it; empty for native, auto and pytorch, which every format serves.
  std::vector<std::string> formats;
  // Heap settings: glibc's mmap threshold, in bytes, that importing the model's Python stack
  // leaves (0: its reads do not land in Python's heap). The run step MatchAllocatorToIoModel
  // (dlio/loop.h) raises the process's thresholds to it under reader.client_costs framework.
  size_t python_import_threshold = 0;
  // Sampler adaptation: reads follow each file's stream, so a sample shuffle is applied after the
  // reads (tf.data's shuffle buffer; AdaptSamplerToIoModel in dlio/loop.h).
  bool stream_order_sampler = false;
  // The reader reads a sample's bytes back once it loaded them (pyio's check of the whole file),
  // so no reader under it streams samples (FormatCapabilities::streams_samples, SamplesStream in
  // dlio/loop.h): a pipeline never reads its samples through a ring of reused memory.
  bool reads_sample_back = false;
  // Client work: under reader.client_costs framework the model's readers do the framework's own
  // work (fresh memory per sample or per read, copies, CRC passes; FormatOptions::
  // framework_client_costs); false: client_costs changes none of its readers.
  bool client_work = false;
  // The prefixes of the config keys the model declares itself and parses into its own options
  // type (pyio's "reader.pyio_", io_models/pyio_keys.cc), as a registry entry's key_sections;
  // config_docs_test walks the table. Empty: none.
  std::vector<std::string> key_sections{};
  // The reader reads a shard's samples in any order, each by its offset (tarfile's member index),
  // so a format whose shards are otherwise streamed (FormatCapabilities::shard_streams) has its
  // samples sampled as any file's: no shard split, no stream order (AdaptSamplerToFormat).
  bool seeks_in_shards = false;
};

// The table, in the order of IoModel's values (entry i is for static_cast<IoModel>(i)).
const std::vector<IoModelEntry>& IoModelTable();
// The entry of `model`; auto's for a value outside the enum (only a cast can make one).
const IoModelEntry& IoModelEntryFor(IoModel model);

}  // namespace dlio::io_models
