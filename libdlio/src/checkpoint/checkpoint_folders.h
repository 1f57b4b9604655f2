// Which folder of checkpoint_folder holds each checkpoint a file checkpointer knows, by id: the
// folders checkpoint.folder_name's template names (folder_name.h; dlio's ckpt-{id:06} by default),
// or DLIO's global_epoch<e>_step<s> (checkpoint type dlio_benchmark).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "checkpoint/folder_name.h"
#include "dlio/status.h"
#include "dlio/storage.h"

namespace dlio::checkpoint_internal {

class CheckpointFolders {
 public:
  // The checkpoints already in `folder` under `names`' template (none when the folder does not
  // exist), after removing the temporaries of killed saves whose owner is dead
  // (RemoveDeadTemporaries). With {id} in the template each is the id its name holds (two names
  // of one id: the one of the higher step); without it the ids are 0, 1, ... in the order of their
  // steps (then names). first_id() is one past the highest: earlier checkpoints keep their ids and
  // are never overwritten by id, and ranks that list the same folder agree on them.
  static Result<CheckpointFolders> List(Storage* storage, const std::string& folder,
                                        FolderNameTemplate names);
  // DLIO's layout: ids count this run's saves from 0; an id it did not save is DLIO's
  // checkpoint-only name for it, global_epoch1_step<id + 1>.
  // Removes dead temporaries first, as List.
  static Result<CheckpointFolders> EpochStep(Storage* storage, const std::string& folder);
  // checkpoint.folder_name "." (kFlatFolderName): every save's files in `folder` itself, each
  // checkpoint the file there that `files` (the per-save template of a file every save writes)
  // names; ids and steps from those names as List takes them from folders' names.
  static Result<CheckpointFolders> Flat(Storage* storage, const std::string& folder,
                                        FolderNameTemplate files);

  uint64_t first_id() const { return first_id_; }
  bool epoch_step() const { return epoch_step_; }
  // Every save's files are in the checkpoint folder itself (Flat): no folder, no manifest.
  bool flat() const { return flat_; }

  // The folder (its path) of this run's save `id` after global step `step` of `epoch`.
  std::string DirFor(uint64_t id, uint64_t epoch, int64_t step) const;
  // Remembers that save, once made, for DirOf and StepOf.
  void Add(uint64_t id, uint64_t epoch, int64_t step);
  // The folder of checkpoint `id`: a listed or saved one; else, with {id} in the template, the name
  // it gives that id; with DLIO's layout, global_epoch1_step<id + 1>; NotFound otherwise.
  Result<std::string> DirOf(uint64_t id) const;
  // The global step in checkpoint `id`'s folder name ({step} of the template), -1 when its name
  // has none.
  int64_t StepOf(uint64_t id) const { return NumbersOf(id).step; }
  // Checkpoint `id` and the step and epoch its folder's name (flat: its file's) holds, -1 for
  // each it does not hold or of a checkpoint not known.
  SaveNumbers NumbersOf(uint64_t id) const;
  // The listed and saved checkpoints' ids and folders, ascending by id (DLIO's layout: the
  // folders in `storage`'s checkpoint folder now named global_epoch1_step<id + 1>).
  Result<std::vector<std::pair<uint64_t, std::string>>> Folders(Storage* storage) const;

 private:
  struct Known {
    std::string dir;
    int64_t step = -1;
    int64_t epoch = -1;
  };

  // List and Flat: the saves `names` names in `folder`, each a folder of its own or (flat) a
  // file in it.
  static Result<CheckpointFolders> ListNamed(Storage* storage, const std::string& folder,
                                             FolderNameTemplate names, bool flat);

  std::string folder_;
  FolderNameTemplate names_;
  bool epoch_step_ = false;
  bool flat_ = false;
  uint64_t first_id_ = 0;
  std::map<uint64_t, Known> known_;
};

}  // namespace dlio::checkpoint_internal
