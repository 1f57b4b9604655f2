// Names and bookkeeping files of a checkpoint folder: DLIO's global_epoch<e>_step<s> directories
// (the others are named by checkpoint.folder_name: folder_name.h), the per-rank manifests that mark
// a checkpoint complete, the tag file, and the temporaries of killed saves.
//
// <folder>/<checkpoint.folder_name: ckpt-<id, 6 digits> by default>/<file>: every rank writes its
// files, then its manifest ".dlio-complete-rank<r>", an empty file created in place (no write
// request and no fsync of its own, so the emulated I/O changes by one create per rank and
// checkpoint). A rank's share of a checkpoint is complete when its manifest exists and each of the
// rank's planned files exists with its planned size; a checkpoint without the manifest was torn by
// a kill or a failure.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/folder_name.h"
#include "dlio/status.h"
#include "dlio/storage.h"

namespace dlio::torch_save {
struct TorchStateDict;
}  // namespace dlio::torch_save
namespace dlio::h5py_save {
struct H5pyLayout;
}  // namespace dlio::h5py_save

namespace dlio::checkpoint_internal {

struct PlannedFile {
  std::string name;  // inside the checkpoint's directory
  uint64_t bytes = 0;
  // Set for checkpoint type torch_save: the file is torch.save's zip of this state dict.
  std::shared_ptr<const torch_save::TorchStateDict> torch;
  // Set for checkpoint type h5py_save: the file is the HDF5 file h5py writes for these datasets.
  std::shared_ptr<const h5py_save::H5pyLayout> h5py;
  // Set when the name differs from save to save (checkpoint.torch_file_name's {id}, {step} or
  // {epoch}, as model-{step}.pt): `name` is then the template's text, and each save's file is the
  // name the template gives its numbers.
  std::shared_ptr<const FolderNameTemplate> per_save;
};

std::string StripTrailingSlashes(std::string path);

// DLIO's checkpoint folder "global_epoch<epoch>_step<step>" (checkpoint type dlio_benchmark).
std::string EpochStepDirName(uint64_t epoch, int64_t step);
// The step of "global_epoch<epoch>_step<digits>" for this epoch, nullopt for any other name.
std::optional<uint64_t> ParseEpochStepDirName(const std::string& name, uint64_t epoch);

// Whether each of `plan`'s files exists in `dir` with its planned size.
Result<bool> HasPlannedFiles(Storage* storage, const std::string& dir,
                             const std::vector<PlannedFile>& plan);

// ".dlio-complete-rank<r>".
std::string ManifestName(int rank);
// Whether `dir` holds rank `rank`'s complete share of a checkpoint written with `plan`.
Result<bool> IsCompleteShare(Storage* storage, const std::string& dir, int rank,
                             const std::vector<PlannedFile>& plan);

// checkpoint.tag_file: the tag file DeepSpeed keeps beside its checkpoint folders (`latest`),
// rewritten after each save with the folder's name and read before a load. WriteTagFile opens
// `path` with truncation and writes `text` in one request (Python's open(path, 'w').write);
// ReadTagFile reads it as Python's open(path).read() does: st_size + 1 bytes from offset 0, then
// 1 byte at the end of the file (the empty read that ends it). A missing file is not an error
// (nothing is read: a run without a tag yet).
Status WriteTagFile(Storage* storage, const std::string& path, const std::string& text);
Status ReadTagFile(Storage* storage, const std::string& path);

// Removes, from every directory of `folder` that `names` names and every global_epoch*_step* one,
// the temporaries
// ("<name><kAtomicTmpInfix><owner token>") whose owner is provably dead (core/owner_stamp.h): what
// saves killed mid-write left when dlio wrote checkpoints through temporaries (before it wrote
// them in place as frameworks do). Nothing else is touched: not a live process's temporary, not
// another host's, not a name without a valid token. Best effort (a rank running the same cleanup
// may remove a file first). Returns the paths removed.
Result<std::vector<std::string>> RemoveDeadTemporaries(Storage* storage, const std::string& folder,
                                                       const FolderNameTemplate& names);

}  // namespace dlio::checkpoint_internal
