// The built-in checkpointers' registrations, each with what it declares to the runner
// (CheckpointerCapabilities): the bytes a rank writes per checkpoint, for the preflight's disk
// check; whether it writes a transformer's layers (the runner logs the plan); DLIO's cadence.
#include <cstdint>

#include "checkpoint/file_checkpointer.h"
#include "dlio/checkpointer.h"

namespace dlio {
namespace {

uint64_t SaturatingAdd(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

Result<uint64_t> TransformerRankBytes(const CheckpointOptions& options) {
  DLIO_ASSIGN_OR_RETURN(
      TransformerRankPlan plan,
      PlanTransformerCheckpoint(options.transformer, options.rank, options.world));
  return SaturatingAdd(plan.model_bytes, plan.optimizer_bytes);
}

// Every rank's planned files, rank_mode root or not (an upper bound with root: only rank 0
// writes), as the preflight has always sized DLIO's layout.
Result<uint64_t> DlioBenchmarkRankBytes(const CheckpointOptions& options) {
  DLIO_ASSIGN_OR_RETURN(auto files, PlanDlioBenchmarkCheckpoint(options));
  uint64_t bytes = 0;
  for (const auto& f : files) bytes = SaturatingAdd(bytes, f.bytes);
  return bytes;
}

// The types whose folders checkpoint.folder_name names.
CheckpointerCapabilities FoldersDeclare() {
  CheckpointerCapabilities c;
  c.check_options = checkpoint_internal::CheckFolderOptions;
  return c;
}

// torch_save's and h5py_save's folders may be none: checkpoint.folder_name "." (torch_save's
// per-save file names side by side in checkpoint_folder; h5py_save's one file rewritten by every
// save).
CheckpointerCapabilities FlatFoldersDeclare() {
  CheckpointerCapabilities c;
  c.check_options = checkpoint_internal::CheckFlatFolderOptions;
  return c;
}

CheckpointerCapabilities ModelDeclares() {
  CheckpointerCapabilities c = FoldersDeclare();
  c.rank_bytes = [](const CheckpointOptions& o) -> Result<uint64_t> {
    return checkpoint_internal::ModelRankBytes(o);
  };
  return c;
}

CheckpointerCapabilities TransformerDeclares() {
  CheckpointerCapabilities c = FoldersDeclare();
  c.writes_transformer_layers = [](const CheckpointOptions&) { return true; };
  c.rank_bytes = TransformerRankBytes;
  c.size_keys = "model.transformer.*, model.num_layers";
  return c;
}

CheckpointerCapabilities DlioBenchmarkDeclares() {
  CheckpointerCapabilities c;
  c.check_options = checkpoint_internal::CheckDlioFolderOptions;
  c.writes_transformer_layers = [](const CheckpointOptions& o) {
    return o.transformer.num_layers > 0;
  };
  c.rank_bytes = DlioBenchmarkRankBytes;
  c.dlio_cadence = true;
  return c;
}

}  // namespace

Status RegisterBuiltinCheckpointers(CheckpointerRegistry* checkpointers) {
  DLIO_RETURN_NOT_OK(checkpointers->Register(
      {"paper",
       "the DLIO paper's pattern: per rank five files of 1 KiB, 1 KiB, 4 KiB, 64 KiB and 4 MiB",
       "checkpoint.checkpoint_folder, folder_name, tag_file, fsync, read_back, transfer_size, "
       "rank_mode",
       checkpoint_internal::MakePaperCheckpointer, FoldersDeclare()}));
  DLIO_RETURN_NOT_OK(checkpointers->Register(
      {"model",
       "model_size_bytes per checkpoint, split evenly over ranks (rank_mode: root = rank 0 only)",
       "checkpoint.checkpoint_folder, folder_name, tag_file, model_size_bytes, model_files, fsync, "
       "read_back, transfer_size, rank_mode, storage_type",
       checkpoint_internal::MakeModelCheckpointer,
       ModelDeclares(),
       {},
       {"checkpoint.model_files"}}));
  DLIO_RETURN_NOT_OK(checkpointers->Register(
      {"transformer",
       "DLIO's LLM checkpoint: per-rank model layers and optimizer state from the model "
       "description, split by tensor/pipeline parallelism and ZeRO stage",
       "model.num_layers, model.transformer.*, model.parallelism.*, model.model_datatype, "
       "model.optimizer_datatype, checkpoint.mode, checkpoint.checkpoint_folder, folder_name, "
       "tag_file, fsync, read_back, transfer_size, size_divisor",
       checkpoint_internal::MakeTransformerCheckpointer, TransformerDeclares()}));
  DLIO_RETURN_NOT_OK(checkpointers->Register(
      {"dlio_benchmark",
       "the Python DLIO's checkpoint files and folders: global_epoch<e>_step<s>/ holding "
       "model_states-<rank> (non-transformer models), layer and optimizer states as "
       "'transformer', as framework pytorch (.pt) or tensorflow (tf.train.Checkpoint) stores "
       "them",
       "framework, model.type, model.model_size_bytes, model.*, checkpoint.checkpoint_folder, "
       "fsync, read_back, transfer_size, size_divisor, rank_mode, storage_type",
       checkpoint_internal::MakeDlioBenchmarkCheckpointer, DlioBenchmarkDeclares()}));
  DLIO_RETURN_NOT_OK(checkpointers->Register(
      {"torch_save",
       "the file torch.save(state_dict, path) writes (PyTorch 1.13's zip: data.pkl, a 64-byte "
       "aligned record per tensor, version), with its write requests; one file per writing rank, "
       "or several (a nested container's, such as DeepSpeed's model and optimizer states)",
       "checkpoint.torch_state_dict, torch_modules, torch_file_name, torch_pickle_bytes, "
       "checkpoint_folder, folder_name, tag_file, fsync, read_back, resume, rank_mode, "
       "storage_type",
       checkpoint_internal::MakeTorchSaveCheckpointer,
       FlatFoldersDeclare(),
       {},
       {"checkpoint.torch_"}}));
  DLIO_RETURN_NOT_OK(checkpointers->Register(
      {"h5py_save",
       "the HDF5 file h5py writes for a model's weights (Keras' save_weights; "
       "h5py.File(path, 'w') and create_dataset per tensor), written through libhdf5 with "
       "h5py's settings so that its write requests are h5py's; loads read each dataset whole",
       "checkpoint.h5py_datasets, h5py_file_name, checkpoint_folder, folder_name, tag_file, "
       "read_back, resume, rank_mode, storage_type",
       checkpoint_internal::MakeH5pySaveCheckpointer,
       FlatFoldersDeclare(),
       {},
       {"checkpoint.h5py_"}}));
  return Status::OK();
}

}  // namespace dlio
