// FitTrace: runs the stages of fit_internal.h over a trace and collects their entries.
#include <algorithm>

#include "dlio/profile_fit.h"
#include "dlio/str_cat.h"
#include "profile/fit_internal.h"

namespace dlio {

std::string_view FitConfidenceName(FitConfidence c) {
  switch (c) {
    case FitConfidence::kHigh:
      return "high";
    case FitConfidence::kMedium:
      return "medium";
    case FitConfidence::kLow:
      return "low";
  }
  return "low";
}

const FitEntry* FitResult::Find(std::string_view key) const {
  for (const FitEntry& e : entries) {
    if (e.key == key) return &e;
  }
  return nullptr;
}

Result<FitResult> FitTrace(const ProfileTrace& trace, const FitOptions& options) {
  fit::View view;
  DLIO_RETURN_NOT_OK(fit::CollectFiles(trace, options, &view));
  fit::CollectAccesses(trace, &view);
  fit::CollectSteps(trace, options, &view);

  FitResult out;
  for (const fit::DataFile& f : view.files) out.data_files.push_back(f.path);
  fit::Set(&out, "name", options.name, FitConfidence::kHigh, "the run's name (--name)");
  if (view.files.empty()) {
    DLIO_RETURN_NOT_OK(fit::FitCheckpointOnly(trace, view, options, &out));
    out.notes.push_back(StrCat(trace.size(), " events; no data file read: checkpoint writes only"));
    return out;
  }
  fit::Set(&out, "workflow.generate_data", "true", FitConfidence::kHigh,
           "the emulation writes its own dataset to dataset.data_folder");
  fit::Set(&out, "workflow.train", "true", FitConfidence::kHigh,
           StrCat(view.accesses.size(), " sample reads of ", view.files.size(), " data files"));
  const bool eval = std::any_of(view.files.begin(), view.files.end(),
                                [](const fit::DataFile& f) { return f.valid; });
  if (eval) {
    fit::Set(&out, "workflow.evaluation", "true", FitConfidence::kMedium,
             "files under a valid/eval folder are read");
    fit::Unset(&out, "evaluation.eval_time", "0",
               "the compute of evaluation steps is not told apart from training's");
  }
  fit::FitDataset(trace, view, options, &out);
  fit::FitReader(trace, view, options, &out);
  fit::FitTrain(view, &out);
  fit::FitCheckpoint(trace, view, options, &out);
  fit::FitSideIo(trace, view, &out);

  int64_t probed = 0;
  for (const fit::DataFile& f : view.files) probed += f.probed;
  out.notes.push_back(StrCat(trace.size(), " events; ", view.files.size(), " data files (.",
                             view.extension, "), ", probed, " of them probed on disk; ",
                             view.accesses.size(), " sample reads in ", view.epochs, " pass",
                             view.epochs == 1 ? "" : "es"));
  out.notes.push_back(
      view.steps_from_compute ? StrCat("steps: ", view.steps.size(), " compute events")
      : view.steps.empty()    ? std::string("steps: none visible (no compute events, no pauses)")
                              : StrCat("steps: ", view.steps.size() + 1,
                                       " bursts of reads (no compute events in the trace)"));
  return out;
}

}  // namespace dlio
