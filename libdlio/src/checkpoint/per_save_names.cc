#include "checkpoint/per_save_names.h"

#include <algorithm>
#include <optional>

#include "dlio/str_cat.h"
#include "format/torch/torch_save_file.h"

namespace dlio::checkpoint_internal {

using torch_save::TorchArchiveName;
using torch_save::TorchSaveFileSize;
namespace {

bool NameHoldsStep(const PlannedFile& f) { return f.per_save && f.per_save->names_step(); }
bool NameHoldsEpoch(const PlannedFile& f) { return f.per_save && f.per_save->names_epoch(); }
bool NameHoldsNumbers(const PlannedFile& f) { return NameHoldsStep(f) || NameHoldsEpoch(f); }

int64_t SignedOrNone(const std::optional<uint64_t>& v) { return v ? static_cast<int64_t>(*v) : -1; }

// The numbers in the one entry of `names` that `t` makes for checkpoint `id`.
Result<SaveNumbers> NumbersNamed(const FolderNameTemplate& t, uint64_t id, const std::string& dir,
                                 const std::vector<std::string>& names) {
  std::optional<SaveNumbers> found;
  for (const std::string& name : names) {
    const auto fields = t.Match(name);
    if (!fields || (fields->id && *fields->id != id)) continue;
    if (found) {
      return Status::InvalidArgument("checkpoint folder ", dir,
                                     " holds several files named as checkpoint.torch_file_name '",
                                     t.text(), "'");
    }
    found = SaveNumbers{id, SignedOrNone(fields->step), SignedOrNone(fields->epoch)};
  }
  if (!found) {
    return Status::NotFound("checkpoint folder ", dir,
                            " holds no file named as checkpoint.torch_file_name '", t.text(), "'");
  }
  return *found;
}

}  // namespace

PlannedFile ForSave(PlannedFile f, const SaveNumbers& n) {
  if (!f.per_save) return f;
  f.name = f.per_save->Name(n);
  if (f.torch) f.bytes = TorchSaveFileSize(TorchArchiveName(f.name), *f.torch);
  return f;
}

std::vector<PlannedFile> PlanForSave(const std::vector<PlannedFile>& plan, const SaveNumbers& n) {
  std::vector<PlannedFile> out;
  out.reserve(plan.size());
  for (const PlannedFile& f : plan) out.push_back(ForSave(f, n));
  return out;
}

bool NamesHoldNumbers(const std::vector<PlannedFile>& plan) {
  return std::any_of(plan.begin(), plan.end(), NameHoldsNumbers);
}

bool KnowsNumbers(const std::vector<PlannedFile>& plan, const SaveNumbers& n) {
  const bool step = n.step >= 0 || std::none_of(plan.begin(), plan.end(), NameHoldsStep);
  return step && (n.epoch >= 0 || std::none_of(plan.begin(), plan.end(), NameHoldsEpoch));
}

SavedPlan SavedPlanOf(const std::vector<PlannedFile>& plan, const SaveNumbers& n) {
  const bool step = std::any_of(plan.begin(), plan.end(), NameHoldsStep);
  const bool epoch = std::any_of(plan.begin(), plan.end(), NameHoldsEpoch);
  return {PlanForSave(plan, n), step ? n.step : -1, epoch ? n.epoch : -1};
}

Result<SavedPlan> SavedPlanIn(const std::vector<PlannedFile>& plan, uint64_t id,
                              const std::string& dir, const std::vector<std::string>& names) {
  SavedPlan saved;
  for (const PlannedFile& f : plan) {
    SaveNumbers n{id, 0, 0};
    if (NameHoldsNumbers(f)) {
      DLIO_ASSIGN_OR_RETURN(n, NumbersNamed(*f.per_save, id, dir, names));
      saved.step = std::max(saved.step, n.step);
      saved.epoch = std::max(saved.epoch, n.epoch);
    }
    saved.plan.push_back(ForSave(f, n));
  }
  return saved;
}

}  // namespace dlio::checkpoint_internal
