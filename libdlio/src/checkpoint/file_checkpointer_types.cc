// The built-in file checkpointers' types (file_checkpointer.h): each one's files per rank and
// checkpoint (the paper's five, a model's bytes, DLIO's transformer layout, DLIO's own layout,
// torch.save's zips, h5py's HDF5 file), its validation, and the folders it keeps them in; the
// writing, reading and bookkeeping common to them all is FileCheckpointer's (file_checkpointer.cc).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "checkpoint/checkpoint_folders.h"
#include "checkpoint/checkpoint_layout.h"
#include "checkpoint/file_checkpointer.h"
#include "checkpoint/h5py_save_plan.h"
#include "checkpoint/model_checkpoint_options.h"
#include "checkpoint/torch_save_plan.h"
#include "dlio/checkpointer.h"
#include "dlio/str_cat.h"

namespace dlio {
namespace {

using checkpoint_internal::CheckpointFolders;
using checkpoint_internal::PlannedFile;
using checkpoint_internal::StripTrailingSlashes;

// The paper's pattern. "KB"/"MB" are KiB/MiB, as in the paper's code (1024-based sizes).
struct PaperFile {
  const char* suffix;
  uint64_t bytes;
};
constexpr PaperFile kPaperFiles[] = {
    {"index-a.bin", 1024},    {"index-b.bin", 1024},           {"meta.bin", 4096},
    {"optimizer.bin", 65536}, {"model.bin", 4u * 1024 * 1024},
};

Status ValidateCommon(
    const CheckpointOptions& options, const CheckpointEnv& env,
    Status (*check_folders)(const CheckpointOptions&) = checkpoint_internal::CheckFolderOptions) {
  if (env.storage == nullptr) return Status::InvalidArgument("checkpointer: storage is null");
  if (options.folder.empty()) {
    return Status::InvalidArgument("checkpoint.checkpoint_folder must not be empty");
  }
  if (options.transfer_size == 0) {
    return Status::InvalidArgument("checkpoint.transfer_size must be > 0");
  }
  DLIO_RETURN_NOT_OK(check_folders(options));
  if (options.world < 1 || options.rank < 0 || options.rank >= options.world) {
    return Status::InvalidArgument("checkpointer: rank ", options.rank, " is not in a world of ",
                                   options.world);
  }
  return Status::OK();
}

// The folders already in options.folder, after removing what killed saves of earlier dlio versions
// (which wrote checkpoints through a temporary name) left there (dead owners' only:
// checkpoint_layout.h). DLIO's folders are named by epoch and step, so its ids count this run's
// saves only.
Result<CheckpointFolders> FoldersFor(const CheckpointOptions& options, Storage* storage,
                                     bool epoch_step) {
  const std::string folder = StripTrailingSlashes(options.folder);
  if (epoch_step) return CheckpointFolders::EpochStep(storage, folder);
  DLIO_ASSIGN_OR_RETURN(auto names,
                        checkpoint_internal::FolderNameTemplate::Parse(options.folder_name));
  return CheckpointFolders::List(storage, folder, std::move(names));
}

std::string RankPrefix(int rank) { return StrCat("rank", rank, "-"); }

// A planned file of `bytes` of dlio's content pattern (no torch.save zip, one name for every save).
PlannedFile PlainFile(std::string name, uint64_t bytes) {
  PlannedFile f;
  f.name = std::move(name);
  f.bytes = bytes;
  return f;
}

// The folders, as FoldersFor; with checkpoint.folder_name "." (torch_save's flat layout) the
// files `flat_names` names in the checkpoint folder itself.
Result<CheckpointFolders> FoldersOrFlat(
    const CheckpointOptions& options, Storage* storage, bool epoch_step,
    const std::shared_ptr<const checkpoint_internal::FolderNameTemplate>& flat_names) {
  if (flat_names == nullptr) return FoldersFor(options, storage, epoch_step);
  return CheckpointFolders::Flat(storage, StripTrailingSlashes(options.folder), *flat_names);
}

Result<std::unique_ptr<Checkpointer>> Build(
    const CheckpointOptions& options, const CheckpointEnv& env, std::vector<PlannedFile> plan,
    bool epoch_step = false,
    std::shared_ptr<const checkpoint_internal::FolderNameTemplate> flat_names = nullptr) {
  if (options.root_only && options.rank != 0) plan.clear();
  if (options.size_divisor < 1) {
    return Status::InvalidArgument("checkpoint.size_divisor must be >= 1");
  }
  if (options.size_divisor > 1) {
    for (auto& f : plan) f.bytes = (f.bytes + options.size_divisor - 1) / options.size_divisor;
  }
  DLIO_ASSIGN_OR_RETURN(auto folders, FoldersOrFlat(options, env.storage, epoch_step, flat_names));
  return checkpoint_internal::NewFileCheckpointer(options, env, std::move(plan),
                                                  std::move(folders));
}

// checkpoint.folder_name "." for torch_save and h5py_save: the template of the first file's
// per-save name, which lists the checkpoints in the folder (rank 0's names under rank_mode root,
// which the ranks that write nothing list too). h5py_save's one name is rewritten by every save
// (Keras' save_weights('weights.h5') each epoch); a torch_save file whose name is the same in
// every save is refused (InvalidArgument: saves would overwrite each other's files). nullptr for
// any other folder_name.
Result<std::shared_ptr<const checkpoint_internal::FolderNameTemplate>> FlatNamesFor(
    const CheckpointOptions& options, const std::vector<PlannedFile>& plan) {
  if (options.folder_name != checkpoint_internal::kFlatFolderName) {
    return std::shared_ptr<const checkpoint_internal::FolderNameTemplate>();
  }
  std::vector<PlannedFile> listed = plan;
  if (options.root_only && options.rank != 0) {
    CheckpointOptions root = options;
    root.rank = 0;
    if (plan.front().h5py) {
      DLIO_ASSIGN_OR_RETURN(listed, checkpoint_internal::PlanH5pySaveFiles(root));
    } else {
      DLIO_ASSIGN_OR_RETURN(listed, checkpoint_internal::PlanTorchSaveFiles(root));
    }
  }
  for (const PlannedFile& f : listed) {
    if (!f.per_save && f.h5py) {  // one file every save rewrites (Keras' save_weights)
      return std::make_shared<const checkpoint_internal::FolderNameTemplate>(
          checkpoint_internal::FolderNameTemplate::ParseFileName(f.name,
                                                                 "checkpoint.h5py_file_name")
              .value());
    }
    if (!f.per_save) {
      return Status::InvalidArgument(
          "checkpoint.folder_name: '.' puts every save's files side by side in "
          "checkpoint_folder, so each needs a name of its own: checkpoint.torch_file_name '",
          f.name, "' has no {id}, {step} or {epoch}");
    }
  }
  return listed.front().per_save;
}

}  // namespace

namespace checkpoint_internal {

Result<std::unique_ptr<Checkpointer>> MakePaperCheckpointer(const CheckpointOptions& options,
                                                            const CheckpointEnv& env) {
  DLIO_RETURN_NOT_OK(ValidateCommon(options, env));
  std::vector<PlannedFile> plan;
  for (const auto& f : kPaperFiles)
    plan.push_back(PlainFile(RankPrefix(options.rank) + f.suffix, f.bytes));
  return Build(options, env, std::move(plan));
}

Result<std::unique_ptr<Checkpointer>> MakeModelCheckpointer(const CheckpointOptions& options,
                                                            const CheckpointEnv& env) {
  DLIO_RETURN_NOT_OK(ValidateCommon(options, env));
  const uint64_t k = options.sections.Value<ModelCheckpointOptions>().model_files;
  if (k < 1) return Status::InvalidArgument("checkpoint.model_files must be >= 1");
  if (options.model_size_bytes == 0) {
    return Status::InvalidArgument(
        "checkpoint.model_size_bytes must be > 0 for checkpoint type 'model' (or set "
        "model.model_size)");
  }
  const uint64_t bytes = ModelRankBytes(options);
  std::vector<PlannedFile> plan;
  const std::string stem = StrCat("model-rank", options.rank);
  if (k <= 1) {
    if (bytes > 0) plan.push_back(PlainFile(stem + ".bin", bytes));
  } else {
    for (uint64_t i = 0; i < k; ++i) {
      const uint64_t part = bytes / k + (i < bytes % k ? 1 : 0);
      if (part == 0) continue;
      plan.push_back(PlainFile(StrCat(stem, "-", i + 1, "of", k, ".bin"), part));
    }
  }
  return Build(options, env, std::move(plan));
}

Result<std::unique_ptr<Checkpointer>> MakeTransformerCheckpointer(const CheckpointOptions& options,
                                                                  const CheckpointEnv& env) {
  DLIO_RETURN_NOT_OK(ValidateCommon(options, env));
  const TransformerModel& m = options.transformer;
  if (m.num_layers <= 0 && m.layer_parameters.empty() && m.optimization_groups.empty()) {
    return Status::InvalidArgument(
        "checkpoint type 'transformer' needs model.num_layers > 0 (or model.layer_parameters / "
        "model.optimization_groups)");
  }
  DLIO_ASSIGN_OR_RETURN(TransformerRankPlan rank_plan,
                        PlanTransformerCheckpoint(m, options.rank, options.world));
  std::vector<PlannedFile> plan;
  for (auto& f : rank_plan.files) plan.push_back(PlainFile(std::move(f.name), f.bytes));
  return Build(options, env, std::move(plan));
}

Result<std::unique_ptr<Checkpointer>> MakeDlioBenchmarkCheckpointer(
    const CheckpointOptions& options, const CheckpointEnv& env) {
  DLIO_RETURN_NOT_OK(ValidateCommon(options, env));
  DLIO_ASSIGN_OR_RETURN(auto files, PlanDlioBenchmarkCheckpoint(options));
  std::vector<PlannedFile> plan;
  DLIO_RETURN_NOT_OK(CheckDlioFolderOptions(options));
  for (auto& f : files) plan.push_back(PlainFile(std::move(f.name), f.bytes));
  return Build(options, env, std::move(plan), /*epoch_step=*/true);
}

Result<std::unique_ptr<Checkpointer>> MakeTorchSaveCheckpointer(const CheckpointOptions& options,
                                                                const CheckpointEnv& env) {
  DLIO_RETURN_NOT_OK(ValidateCommon(options, env, CheckFlatFolderOptions));
  if (options.size_divisor > 1) {
    return Status::InvalidArgument(
        "checkpoint.size_divisor does not apply to checkpoint type 'torch_save' (its file is "
        "torch.save's zip of checkpoint.torch_state_dict: make the shapes smaller instead)");
  }
  DLIO_ASSIGN_OR_RETURN(std::vector<PlannedFile> plan,
                        checkpoint_internal::PlanTorchSaveFiles(options));
  DLIO_ASSIGN_OR_RETURN(auto flat_names, FlatNamesFor(options, plan));
  return Build(options, env, std::move(plan), false, std::move(flat_names));
}

Result<std::unique_ptr<Checkpointer>> MakeH5pySaveCheckpointer(const CheckpointOptions& options,
                                                               const CheckpointEnv& env) {
  DLIO_RETURN_NOT_OK(ValidateCommon(options, env, CheckFlatFolderOptions));
  if (options.size_divisor > 1) {
    return Status::InvalidArgument(
        "checkpoint.size_divisor does not apply to checkpoint type 'h5py_save' (its file is "
        "h5py's for checkpoint.h5py_datasets: make the shapes smaller instead)");
  }
  if (options.fsync) {
    return Status::InvalidArgument(
        "checkpoint.fsync: checkpoint type 'h5py_save' writes as h5py does, which never syncs "
        "its file (set checkpoint.fsync false)");
  }
  DLIO_ASSIGN_OR_RETURN(std::vector<PlannedFile> plan,
                        checkpoint_internal::PlanH5pySaveFiles(options));
  DLIO_ASSIGN_OR_RETURN(auto flat_names, FlatNamesFor(options, plan));
  return Build(options, env, std::move(plan), false, std::move(flat_names));
}

uint64_t ModelRankBytes(const CheckpointOptions& options) {
  // root_only: rank 0 holds the whole model. Otherwise the first (total % world) ranks get one
  // byte more than the rest, so the shares sum to the total exactly.
  if (options.root_only) return options.rank == 0 ? options.model_size_bytes : 0;
  const uint64_t world = static_cast<uint64_t>(std::max(options.world, 1));
  const uint64_t rank = static_cast<uint64_t>(options.rank);
  return options.model_size_bytes / world + (rank < options.model_size_bytes % world ? 1 : 0);
}

}  // namespace checkpoint_internal
}  // namespace dlio
