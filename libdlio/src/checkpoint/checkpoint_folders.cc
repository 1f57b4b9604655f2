#include "checkpoint/checkpoint_folders.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "checkpoint/checkpoint_layout.h"
#include "checkpoint/file_checkpointer.h"
#include "dlio/checkpointer.h"
#include "dlio/str_cat.h"

namespace dlio::checkpoint_internal {
namespace {

struct Listed {
  std::string name;
  FolderNameTemplate::Fields fields;
};

int64_t FieldOrNone(const std::optional<uint64_t>& f) { return f ? static_cast<int64_t>(*f) : -1; }

}  // namespace

Result<CheckpointFolders> CheckpointFolders::List(Storage* storage, const std::string& folder,
                                                  FolderNameTemplate names) {
  return ListNamed(storage, folder, std::move(names), false);
}

Result<CheckpointFolders> CheckpointFolders::Flat(Storage* storage, const std::string& folder,
                                                  FolderNameTemplate files) {
  return ListNamed(storage, folder, std::move(files), true);
}

Result<CheckpointFolders> CheckpointFolders::ListNamed(Storage* storage, const std::string& folder,
                                                       FolderNameTemplate names, bool flat) {
  DLIO_RETURN_NOT_OK(
      RemoveDeadTemporaries(storage, folder, flat ? FolderNameTemplate() : names).status());
  CheckpointFolders out;
  out.folder_ = folder;
  out.names_ = std::move(names);
  out.flat_ = flat;
  std::vector<Listed> listed;
  DLIO_ASSIGN_OR_RETURN(bool exists, storage->Exists(folder));
  if (exists) {
    DLIO_ASSIGN_OR_RETURN(auto entries, storage->List(folder));
    for (auto& entry : entries) {
      if (auto fields = out.names_.Match(entry)) listed.push_back({std::move(entry), *fields});
    }
  }
  // By id, or by step (then epoch) without one; then by step, epoch and name, so the last of an
  // id is its newest.
  std::sort(listed.begin(), listed.end(), [](const Listed& a, const Listed& b) {
    return std::tie(a.fields.id, a.fields.step, a.fields.epoch, a.name) <
           std::tie(b.fields.id, b.fields.step, b.fields.epoch, b.name);
  });
  for (size_t k = 0; k < listed.size(); ++k) {
    const Listed& l = listed[k];
    const uint64_t id = l.fields.id ? *l.fields.id : k;
    out.known_[id] = {flat ? folder : StrCat(folder, "/", l.name), FieldOrNone(l.fields.step),
                      FieldOrNone(l.fields.epoch)};
  }
  out.first_id_ = out.known_.empty() ? 0 : out.known_.rbegin()->first + 1;
  return out;
}

Result<CheckpointFolders> CheckpointFolders::EpochStep(Storage* storage,
                                                       const std::string& folder) {
  DLIO_RETURN_NOT_OK(RemoveDeadTemporaries(storage, folder, FolderNameTemplate()).status());
  CheckpointFolders out;
  out.folder_ = folder;
  out.epoch_step_ = true;
  return out;
}

std::string CheckpointFolders::DirFor(uint64_t id, uint64_t epoch, int64_t step) const {
  if (flat_) return folder_;
  return StrCat(
      folder_, "/",
      epoch_step_ ? EpochStepDirName(epoch, step) : names_.Name({id, step, NamedEpoch(epoch)}));
}

void CheckpointFolders::Add(uint64_t id, uint64_t epoch, int64_t step) {
  const bool steps = !epoch_step_ && names_.names_step();
  const bool epochs = !epoch_step_ && names_.names_epoch();
  known_[id] = {DirFor(id, epoch, step), steps ? std::max<int64_t>(step, 0) : -1,
                epochs ? NamedEpoch(epoch) : -1};
}

Result<std::string> CheckpointFolders::DirOf(uint64_t id) const {
  if (auto it = known_.find(id); it != known_.end()) return it->second.dir;
  if (epoch_step_) {
    return StrCat(folder_, "/", EpochStepDirName(1, static_cast<int64_t>(id + 1)));
  }
  if (names_.names_id()) return flat_ ? folder_ : StrCat(folder_, "/", names_.Name({id, 0, 0}));
  return Status::NotFound("checkpoint ", id, " is not in ", folder_,
                          flat_ ? " (checkpoint.torch_file_name '" : " (checkpoint.folder_name '",
                          names_.text(), "')");
}

SaveNumbers CheckpointFolders::NumbersOf(uint64_t id) const {
  auto it = known_.find(id);
  if (it == known_.end()) return {id, -1, -1};
  return {id, it->second.step, it->second.epoch};
}

Result<std::vector<std::pair<uint64_t, std::string>>> CheckpointFolders::Folders(
    Storage* storage) const {
  std::vector<std::pair<uint64_t, std::string>> out;
  if (!epoch_step_) {
    for (const auto& entry : known_) out.emplace_back(entry.first, entry.second.dir);
    return out;
  }
  // DLIO's checkpoint-only names, global_epoch1_step<id + 1>.
  DLIO_ASSIGN_OR_RETURN(bool exists, storage->Exists(folder_));
  if (!exists) return out;
  DLIO_ASSIGN_OR_RETURN(auto names, storage->List(folder_));
  for (const auto& name : names) {
    auto step = ParseEpochStepDirName(name, 1);
    if (step && *step > 0) out.emplace_back(*step - 1, StrCat(folder_, "/", name));
  }
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

// checkpoint.tag_file is a plain file name: no '/', not '.' or '..', not one of dlio's own
// '.dlio...' names, nor a name of the save folders (`folders`, when there are any).
Status CheckTagFileName(const CheckpointOptions& options, const FolderNameTemplate* folders) {
  const std::string& tag = options.tag_file;
  if (tag.empty()) return Status::OK();
  const bool a_folder = folders != nullptr && folders->Match(tag).has_value();
  if (tag == "." || tag == ".." || tag.find('/') != std::string::npos ||
      tag.rfind(".dlio", 0) == 0 || a_folder) {
    return Status::InvalidArgument(
        "checkpoint.tag_file: '", tag, "' is not a file name (no '/', not '.dlio...'",
        folders != nullptr
            ? StrCat(", not a name of checkpoint.folder_name '", options.folder_name, "')")
            : std::string(")"));
  }
  return Status::OK();
}

}  // namespace

// checkpoint.folder_name's and tag_file's checks (file_checkpointer.h).
Status CheckFolderOptions(const CheckpointOptions& options) {
  if (options.folder_name == kFlatFolderName) {
    return Status::InvalidArgument(
        "checkpoint.folder_name: '.' (every save's files side by side in checkpoint_folder) "
        "needs file names that change from save to save, which checkpoint type 'torch_save' "
        "has (checkpoint.torch_file_name with {id}, {step} or {epoch}), or one file every save "
        "rewrites, which 'h5py_save' writes");
  }
  DLIO_ASSIGN_OR_RETURN(const auto names, FolderNameTemplate::Parse(options.folder_name));
  return CheckTagFileName(options, &names);
}

Status CheckDlioFolderOptions(const CheckpointOptions& options) {
  if (options.folder_name != kDefaultFolderName) {
    return Status::InvalidArgument(
        "checkpoint.folder_name: '", options.folder_name,
        "' does not apply to checkpoint type 'dlio_benchmark', which names its folders as DLIO "
        "does (global_epoch<e>_step<s>); leave it at ",
        kDefaultFolderName);
  }
  return CheckFolderOptions(options);
}

Status CheckFlatFolderOptions(const CheckpointOptions& options) {
  if (options.folder_name != kFlatFolderName) return CheckFolderOptions(options);
  return CheckTagFileName(options, nullptr);
}

}  // namespace dlio::checkpoint_internal
