#include "checkpoint/per_save_names.h"

#include <algorithm>
#include <optional>

#include "checkpoint/torch_save_file.h"
#include "dlio/str_cat.h"

namespace dlio::checkpoint_internal {
namespace {

bool NameHoldsStep(const PlannedFile& f) { return f.per_save && f.per_save->names_step(); }

// The step in the one entry of `names` that `t` makes for checkpoint `id`.
Result<int64_t> StepNamed(const FolderNameTemplate& t, uint64_t id, const std::string& dir,
                          const std::vector<std::string>& names) {
  std::optional<uint64_t> step;
  for (const std::string& name : names) {
    const auto fields = t.Match(name);
    if (!fields || !fields->step || (fields->id && *fields->id != id)) continue;
    if (step) {
      return Status::InvalidArgument("checkpoint folder ", dir,
                                     " holds several files named as checkpoint.torch_file_name '",
                                     t.text(), "'");
    }
    step = fields->step;
  }
  if (!step) {
    return Status::NotFound("checkpoint folder ", dir,
                            " holds no file named as checkpoint.torch_file_name '", t.text(), "'");
  }
  return static_cast<int64_t>(*step);
}

}  // namespace

PlannedFile ForSave(PlannedFile f, uint64_t id, int64_t step) {
  if (!f.per_save) return f;
  f.name = f.per_save->Name(id, step);
  if (f.torch) f.bytes = TorchSaveFileSize(TorchArchiveName(f.name), *f.torch);
  return f;
}

std::vector<PlannedFile> PlanForSave(const std::vector<PlannedFile>& plan, uint64_t id,
                                     int64_t step) {
  std::vector<PlannedFile> out;
  out.reserve(plan.size());
  for (const PlannedFile& f : plan) out.push_back(ForSave(f, id, step));
  return out;
}

bool NamesHoldStep(const std::vector<PlannedFile>& plan) {
  return std::any_of(plan.begin(), plan.end(), NameHoldsStep);
}

SavedPlan SavedPlanOf(const std::vector<PlannedFile>& plan, uint64_t id, int64_t step) {
  const bool named = NamesHoldStep(plan);
  return {PlanForSave(plan, id, std::max<int64_t>(step, 0)), named ? step : -1};
}

Result<SavedPlan> SavedPlanIn(const std::vector<PlannedFile>& plan, uint64_t id,
                              const std::string& dir, const std::vector<std::string>& names) {
  SavedPlan saved;
  for (const PlannedFile& f : plan) {
    int64_t step = 0;
    if (NameHoldsStep(f)) {
      DLIO_ASSIGN_OR_RETURN(step, StepNamed(*f.per_save, id, dir, names));
      saved.step = std::max(saved.step, step);
    }
    saved.plan.push_back(ForSave(f, id, step));
  }
  return saved;
}

}  // namespace dlio::checkpoint_internal
