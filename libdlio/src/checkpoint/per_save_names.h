// Files whose names differ from save to save: checkpoint.torch_file_name with {id}, {step} or
// {epoch} (model-{step}.pt; PyTorch Lightning's epoch={epoch}-step={step}.ckpt), each save's name
// made by its PlannedFile::per_save template (folder_name.h). A checkpointer keeps its plan with
// the templates and asks here for the files of one save: made from the save's numbers when it
// knows them, else found among the names its folder holds (a checkpoint an earlier run saved).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_layout.h"
#include "dlio/status.h"

namespace dlio::checkpoint_internal {

// File `f` of save `n` (its id, step and epoch): with a per-save name, the name its template
// gives them, and a torch.save file's size for that name (the zip's archive folder is the name's
// stem, whose length moves its records); else `f` as it is.
PlannedFile ForSave(PlannedFile f, const SaveNumbers& n);
std::vector<PlannedFile> PlanForSave(const std::vector<PlannedFile>& plan, const SaveNumbers& n);

// Whether a per-save name of `plan` holds {step} or {epoch}, so that a checkpoint's files cannot
// be named from its id alone.
bool NamesHoldNumbers(const std::vector<PlannedFile>& plan);

// A checkpoint's files, and the global step and epoch their names hold (-1: none holds one).
struct SavedPlan {
  std::vector<PlannedFile> plan;
  int64_t step = -1;
  int64_t epoch = -1;
};
// Whether `n` holds every number `plan`'s per-save names need besides the id.
bool KnowsNumbers(const std::vector<PlannedFile>& plan, const SaveNumbers& n);
// Save `n.id`'s files when its numbers are known (KnowsNumbers), or when no name holds one.
SavedPlan SavedPlanOf(const std::vector<PlannedFile>& plan, const SaveNumbers& n);
// Save `id`'s files in `dir`, whose entries are `names`: each per-save name holding {step} or
// {epoch} is the one entry its template matches for `id`. NotFound naming the folder and the
// template when no entry matches (a torn save), InvalidArgument when several do.
Result<SavedPlan> SavedPlanIn(const std::vector<PlannedFile>& plan, uint64_t id,
                              const std::string& dir, const std::vector<std::string>& names);

}  // namespace dlio::checkpoint_internal
