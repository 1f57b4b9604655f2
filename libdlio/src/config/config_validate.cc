// WorkloadConfig::Validate: value and cross-key rules.
#include <cmath>

#include "config/config_table.h"
#include "dlio/config.h"

namespace dlio {
namespace {

using config_internal::KeySpec;
using config_internal::KeyTable;
using config_internal::ScaleKeySpecs;

Status ValidateDataset(const WorkloadConfig& c) {
  auto invalid = [](const std::string& m) { return Status::InvalidArgument(m); };
  const WorkflowConfig& w = c.workflow;
  const DatasetConfig& d = c.dataset;
  if ((w.train || w.generate_data) && d.num_files_train < 1) {
    return invalid(
        "dataset.num_files_train must be >= 1 when workflow.train or "
        "workflow.generate_data is true");
  }
  if (w.evaluation && d.num_files_eval < 1) {
    return invalid("dataset.num_files_eval must be >= 1 when workflow.evaluation is true");
  }
  DLIO_RETURN_NOT_OK(config_internal::ValidateImageKeys(c));  // format/image/image_keys.cc
  DLIO_RETURN_NOT_OK(config_internal::ValidateHdf5Keys(c));   // format/hdf5/hdf5_keys.cc
  // The rules between these keys and the format, storage and pipeline they name are asked of
  // those (ValidateCapabilities, registries.h).
  return Status::OK();
}

Status ValidateReader(const WorkloadConfig& c) {
  auto invalid = [](const std::string& m) { return Status::InvalidArgument(m); };
  const ReaderConfig& r = c.reader;
  if (r.sampler == "shuffle_buffer" && r.shuffle_size < 1) {
    return invalid("reader.shuffle_size must be >= 1 with reader.sampler 'shuffle_buffer'");
  }
  if (r.odirect && r.transfer_size % 4096 != 0) {
    return invalid(
        StrCat("reader.transfer_size must be a multiple of 4096 with reader.odirect, got ",
               r.transfer_size));
  }
  if (c.workflow.evaluation && c.evaluation.epochs_between_evals < 1) {
    return invalid("evaluation.epochs_between_evals must be >= 1 when workflow.evaluation is true");
  }
  return Status::OK();
}

Status ValidateCheckpoint(const WorkloadConfig& c) {
  auto invalid = [](const std::string& m) { return Status::InvalidArgument(m); };
  const CheckpointConfig& k = c.checkpoint;
  if (c.workflow.checkpoint && k.steps_between_checkpoints < 1 &&
      k.epochs_between_checkpoints < 1 && k.num_checkpoints_write < 1) {
    return invalid(
        "checkpoint.epochs_between_checkpoints must be >= 1 when workflow.checkpoint "
        "is true and checkpoint.steps_between_checkpoints is -1");
  }
  // As DLIO: with no writes, a run reads checkpoints an earlier run left in the folder.
  if (k.num_checkpoints_write > 0 && k.num_checkpoints_read > k.num_checkpoints_write) {
    return invalid(StrCat("checkpoint.num_checkpoints_read (", k.num_checkpoints_read,
                          ") must not exceed checkpoint.num_checkpoints_write (",
                          k.num_checkpoints_write, ")"));
  }
  return Status::OK();
}

Status ValidateModel(const WorkloadConfig& c) {
  auto invalid = [](const std::string& m) { return Status::InvalidArgument(m); };
  const ModelConfig& model = c.model;
  const ParallelismConfig& par = model.parallelism;
  if (c.checkpoint.mode == CheckpointMode::kSubset && par.data < 1) {
    return invalid(
        "checkpoint.mode 'subset' needs model.parallelism.data >= 1 (the data-parallel "
        "degree of the job whose first ranks this run emulates)");
  }
  if (model.num_layers <= 0) return Status::OK();
  // DLIO's rules: every stage needs a layer, and ZeRO-3 shards cannot cross pipeline stages.
  if (static_cast<uint64_t>(model.num_layers) < par.pipeline) {
    return invalid(StrCat("model.num_layers (", model.num_layers,
                          ") must be >= model.parallelism.pipeline (", par.pipeline, ")"));
  }
  if (par.pipeline > 1 && par.zero_stage == 3) {
    return invalid(
        "model.parallelism.zero_stage 3 does not combine with model.parallelism.pipeline > 1");
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
  return Status::OK();
}

Status ValidateSideIo(const WorkloadConfig& c) {
  auto invalid = [](const std::string& m) { return Status::InvalidArgument(m); };
  const SideIoConfig& s = c.side_io;
  if (!s.read_file.empty()) {
    if (s.read_size < 1) return invalid("side_io.read_size must be >= 1 with a side_io.read_file");
    if (s.read_file_format.empty()) {
      return invalid("side_io.read_file_format must not be empty (raw or a format name)");
    }
  }
  if (s.end_reads > 0 && s.access != SideIoAccess::kWhole) {
    return invalid(
        "side_io.end_reads needs side_io.access: whole (it counts the requests after "
        "a whole-file pass)");
  }
  if (s.write_bytes > 0 && s.write_file.find("{rank}") == std::string::npos) {
    return invalid(
        "side_io.write_file must contain {rank} (every rank writes its own file), got '" +
        s.write_file + "'");
  }
  return Status::OK();
}

}  // namespace

Status WorkloadConfig::Validate() const {
  // Every key's own checks (range, accepted values, not empty, distributions) come from the
  // table; the rules below relate keys to each other.
  WorkloadConfig c = *this;  // the table's accessors take a mutable config
  for (const KeySpec& spec : KeyTable()) {
    const std::string problem = config_internal::CheckValue(spec, c);
    if (!problem.empty()) return Status::InvalidArgument(problem);
  }
  DLIO_RETURN_NOT_OK(ScaleKeySpecs(scale_keys).status());
  DLIO_RETURN_NOT_OK(ValidateDataset(*this));
  DLIO_RETURN_NOT_OK(config_internal::ValidateParquetKeys(*this));  // format/parquet/
  DLIO_RETURN_NOT_OK(config_internal::ValidateRecordShapes(*this));
  DLIO_RETURN_NOT_OK(ValidateReader(*this));
  DLIO_RETURN_NOT_OK(ValidateCheckpoint(*this));
  DLIO_RETURN_NOT_OK(ValidateModel(*this));
  DLIO_RETURN_NOT_OK(ValidateSideIo(*this));
  return config_internal::ValidateMpiioKeys(*this);  // storage/mpiio_keys.cc
}

}  // namespace dlio
