// WorkloadConfig::Validate: value and cross-key rules.
#include <algorithm>
#include <cmath>

#include "config/config_table.h"
#include "config/value_parse.h"
#include "dlio/config.h"

namespace dlio {
namespace {

using config_internal::JoinAccepted;
using config_internal::KeySpec;
using config_internal::KeyTable;
using config_internal::KeyType;
using config_internal::ScaleKeySpecs;

// MPI collective reads (storage.mpiio_collective) need every rank to open the same files in the
// same order and to issue the same number of reads of the same sizes on them, from one thread;
// otherwise a rank waits forever in a collective the others never join. These are the
// configurations where the runner guarantees that (docs/scaling.md explains each rule).
Status ValidateCollectiveIo(const WorkloadConfig& c) {
  if (!c.storage.mpiio_collective) return Status::OK();
  auto refuse = [](const std::string& why) {
    return Status::InvalidArgument("storage.mpiio_collective: true " + why);
  };
  const bool mpiio = c.storage.storage_type == "mpiio" ||
                     (c.storage.storage_type == "slow" && c.storage.slow_inner == "mpiio");
  if (!mpiio) {
    return refuse("needs storage.storage_type 'mpiio', got '" + c.storage.storage_type + "'");
  }
  if (c.reader.pipeline != "sync" || c.reader.read_type == "memory") {
    return refuse("needs reader.pipeline 'sync' (got '" + c.reader.pipeline +
                  "', reader.read_type '" + c.reader.read_type +
                  "'): a collective read must be issued by the training loop's own thread, in "
                  "step with the other ranks");
  }
  if (c.reader.read_threads > 1) {
    return refuse("needs reader.read_threads <= 1, got " + std::to_string(c.reader.read_threads) +
                  ": MPI collectives on one file cannot be issued from several reader threads");
  }
  if (!c.reader.drop_last) {
    return refuse(
        "needs reader.drop_last: true, or the ranks' last batches would differ in size "
        "and so in the number of collective reads");
  }
  if (c.dataset.num_files_train != 1 || (c.workflow.evaluation && c.dataset.num_files_eval != 1)) {
    return refuse(
        "needs one shared file per split (dataset.num_files_train = 1, and "
        "dataset.num_files_eval = 1 with evaluation), got " +
        std::to_string(c.dataset.num_files_train) +
        " train files: every rank must open "
        "the same file together");
  }
  if (c.dataset.record_length_bytes_stdev != 0) {
    return refuse(
        "needs dataset.record_length_bytes_stdev = 0: ranks must read samples of one "
        "size to make the same number of read calls");
  }
  if (c.dataset.compression != "none" && !c.dataset.compression.empty()) {
    return refuse("needs dataset.compression 'none' (compressed samples differ in stored size)");
  }
  // hdf5 reads through parallel HDF5 (one collective H5Dread per sample), not through the
  // storage's collective files: HDF5's own metadata reads through them would differ per rank.
  static const char* kFormats[] = {"npy", "npz", "indexed_binary", "hdf5"};
  if (std::find(std::begin(kFormats), std::end(kFormats), c.dataset.format) == std::end(kFormats)) {
    return refuse(
        "supports dataset.format npy, npz, indexed_binary (whose reads per sample "
        "depend only on the sample size) and hdf5 (parallel HDF5), got '" +
        c.dataset.format + "'");
  }
  if (c.dataset.format == "hdf5" && c.dataset.metadata_file) {
    return refuse(
        "with dataset.format hdf5 needs dataset.metadata_file: false (its per-sample "
        "lookups would be independent reads of a collectively opened file)");
  }
  return Status::OK();
}

}  // namespace

Status WorkloadConfig::Validate() const {
  WorkloadConfig c = *this;  // the table's accessors take a mutable config
  auto invalid = [](const std::string& m) { return Status::InvalidArgument(m); };

  for (const KeySpec& spec : KeyTable()) {
    if (spec.type != KeyType::kEnum || !spec.alias_of.empty()) continue;
    const std::string& v = spec.string_ref(c);
    if (std::find(spec.accepted.begin(), spec.accepted.end(), v) == spec.accepted.end()) {
      return invalid(spec.path + ": '" + v + "' is not one of " + JoinAccepted(spec.accepted));
    }
  }
  // Names looked up in registries at run time must at least be present.
  const std::pair<const char*, const std::string*> non_empty[] = {
      {"dataset.data_folder", &dataset.data_folder},
      {"dataset.format", &dataset.format},
      {"dataset.file_prefix", &dataset.file_prefix},
      {"checkpoint.checkpoint_folder", &checkpoint.checkpoint_folder},
      {"checkpoint.type", &checkpoint.type},
      {"output.folder", &output.folder},
      {"storage.storage_type", &storage.storage_type},
  };
  for (const auto& [key, value] : non_empty) {
    if (value->empty()) return invalid(std::string(key) + " must not be empty");
  }
  if (storage.storage_type == "slow" && storage.slow_inner.empty()) {
    return invalid("storage.slow_inner must not be empty when storage.storage_type is 'slow'");
  }
  if (storage.slow_latency_us < 0) return invalid("storage.slow_latency_us must be >= 0");
  if (storage.slow_latency_stdev_us < 0)
    return invalid("storage.slow_latency_stdev_us must be >= 0");
  if (storage.slow_bandwidth_mib_s < 0) return invalid("storage.slow_bandwidth_mib_s must be >= 0");
  DLIO_RETURN_NOT_OK(ValidateCollectiveIo(*this));

  if ((workflow.train || workflow.generate_data) && dataset.num_files_train < 1) {
    return invalid(
        "dataset.num_files_train must be >= 1 when workflow.train or "
        "workflow.generate_data is true");
  }
  if (workflow.evaluation && dataset.num_files_eval < 1) {
    return invalid("dataset.num_files_eval must be >= 1 when workflow.evaluation is true");
  }
  if (dataset.num_samples_per_file < 1) return invalid("dataset.num_samples_per_file must be >= 1");
  if (dataset.record_length_bytes < 1) return invalid("dataset.record_length_bytes must be >= 1");
  if (dataset.compression_level < 0 || dataset.compression_level > 9) {
    return invalid("dataset.compression_level must be in 0-9, got " +
                   std::to_string(dataset.compression_level));
  }
  if (dataset.image_quality < 1 || dataset.image_quality > 100) {
    return invalid("dataset.image_quality must be in 1-100, got " +
                   std::to_string(dataset.image_quality));
  }
  if (dataset.enable_chunking && dataset.chunk_size < 1 && dataset.chunk_samples < 1) {
    return invalid(
        "dataset.chunk_size or dataset.chunk_samples must be >= 1 when "
        "dataset.enable_chunking is true");
  }

  if (reader.batch_size < 1) return invalid("reader.batch_size must be >= 1");
  if (reader.batch_size_eval < 1) return invalid("reader.batch_size_eval must be >= 1");
  if (reader.sampler == "shuffle_buffer" && reader.shuffle_size < 1) {
    return invalid("reader.shuffle_size must be >= 1 with reader.sampler 'shuffle_buffer'");
  }
  if (reader.read_type == "memory" && reader.pipeline != "preload") {
    return invalid("reader.read_type 'memory' requires reader.pipeline 'preload', got '" +
                   reader.pipeline + "'");
  }
  if (reader.odirect && reader.transfer_size % 4096 != 0) {
    return invalid("reader.transfer_size must be a multiple of 4096 with reader.odirect, got " +
                   std::to_string(reader.transfer_size));
  }
  if (reader.max_open_files < 1) return invalid("reader.max_open_files must be >= 1");

  if (train.epochs < 1) return invalid("train.epochs must be >= 1");
  if (train.total_training_steps == 0 || train.total_training_steps < -1) {
    return invalid("train.total_training_steps must be -1 (whole epochs) or >= 1, got " +
                   std::to_string(train.total_training_steps));
  }
  if (workflow.evaluation && evaluation.epochs_between_evals < 1) {
    return invalid("evaluation.epochs_between_evals must be >= 1 when workflow.evaluation is true");
  }

  if (checkpoint.steps_between_checkpoints == 0 || checkpoint.steps_between_checkpoints < -1) {
    return invalid("checkpoint.steps_between_checkpoints must be -1 (off) or >= 1, got " +
                   std::to_string(checkpoint.steps_between_checkpoints));
  }
  if (workflow.checkpoint && checkpoint.steps_between_checkpoints < 1 &&
      checkpoint.epochs_between_checkpoints < 1 && checkpoint.num_checkpoints_write < 1) {
    return invalid(
        "checkpoint.epochs_between_checkpoints must be >= 1 when workflow.checkpoint "
        "is true and checkpoint.steps_between_checkpoints is -1");
  }
  if (checkpoint.transfer_size < 1) return invalid("checkpoint.transfer_size must be >= 1");
  if (checkpoint.num_checkpoints_write < -1) {
    return invalid("checkpoint.num_checkpoints_write must be >= -1");
  }
  // As DLIO: with no writes, a run reads checkpoints an earlier run left in the folder.
  if (checkpoint.num_checkpoints_write > 0 &&
      checkpoint.num_checkpoints_read > checkpoint.num_checkpoints_write) {
    return invalid("checkpoint.num_checkpoints_read (" +
                   std::to_string(checkpoint.num_checkpoints_read) +
                   ") must not exceed checkpoint.num_checkpoints_write (" +
                   std::to_string(checkpoint.num_checkpoints_write) + ")");
  }

  if (checkpoint.size_divisor < 1) return invalid("checkpoint.size_divisor must be >= 1");
  const ParallelismConfig& par = model.parallelism;
  if (par.tensor < 1) return invalid("model.parallelism.tensor must be >= 1");
  if (par.pipeline < 1) return invalid("model.parallelism.pipeline must be >= 1");
  if (par.zero_stage > 3) {
    return invalid("model.parallelism.zero_stage must be 0, 1, 2 or 3, got " +
                   std::to_string(par.zero_stage));
  }
  if (par.data == 0 || par.data < -1) {
    return invalid("model.parallelism.data must be -1 (derive) or >= 1, got " +
                   std::to_string(par.data));
  }
  if (checkpoint.mode == "subset" && par.data < 1) {
    return invalid(
        "checkpoint.mode 'subset' needs model.parallelism.data >= 1 (the data-parallel "
        "degree of the job whose first ranks this run emulates)");
  }
  if (model.num_layers > 0) {
    // DLIO's rules: every stage needs a layer, and ZeRO-3 shards cannot cross pipeline stages.
    if (static_cast<uint64_t>(model.num_layers) < par.pipeline) {
      return invalid("model.num_layers (" + std::to_string(model.num_layers) +
                     ") must be >= model.parallelism.pipeline (" + std::to_string(par.pipeline) +
                     ")");
    }
    if (par.pipeline > 1 && par.zero_stage == 3) {
      return invalid(
          "model.parallelism.zero_stage 3 does not combine with "
          "model.parallelism.pipeline > 1");
    }
    const TransformerConfig& t = model.transformer;
    const std::pair<const char*, uint64_t> positive[] = {
        {"model.transformer.hidden_size", t.hidden_size},
        {"model.transformer.vocab_size", t.vocab_size},
        {"model.transformer.num_attention_heads", t.num_attention_heads},
    };
    for (const auto& [key, value] : positive) {
      if (value < 1) return invalid(std::string(key) + " must be >= 1 when model.num_layers > 0");
    }
  }
  if (!(reader.read_fraction > 0 && reader.read_fraction <= 1)) {
    return invalid("reader.read_fraction must be in (0, 1], got " +
                   config_internal::FormatDouble(reader.read_fraction));
  }
  if (checkpoint.model_files < 1) return invalid("checkpoint.model_files must be >= 1");
  if (!side_io.read_file.empty()) {
    if (side_io.read_size < 1) return invalid("side_io.read_size must be >= 1");
    if (side_io.read_file_format.empty()) {
      return invalid("side_io.read_file_format must not be empty (raw or a format name)");
    }
  }
  if (side_io.write_bytes > 0 && side_io.write_file.find("{rank}") == std::string::npos) {
    return invalid(
        "side_io.write_file must contain {rank} (every rank writes its own file), got '" +
        side_io.write_file + "'");
  }
  if (!(scale > 0 && std::isfinite(scale))) {
    return invalid("scale must be a finite number > 0, got " +
                   config_internal::FormatDouble(scale));
  }
  DLIO_RETURN_NOT_OK(ScaleKeySpecs(scale_keys).status());

  if (!(metric.au > 0 && metric.au <= 1)) {
    return invalid("metric.au must be in (0, 1], got " + config_internal::FormatDouble(metric.au));
  }

  DLIO_RETURN_NOT_OK(train.computation_time.Validate("train.computation_time"));
  DLIO_RETURN_NOT_OK(reader.preprocess_time.Validate("reader.preprocess_time"));
  DLIO_RETURN_NOT_OK(evaluation.eval_time.Validate("evaluation.eval_time"));
  return Status::OK();
}

}  // namespace dlio
