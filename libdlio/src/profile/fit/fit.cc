// FitTrace: runs the stages of fit_internal.h over a trace and collects their entries.
#include <algorithm>

#include "dlio/profile_fit.h"
#include "dlio/str_cat.h"
#include "profile/fit/fit_internal.h"

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

namespace fit {

Status FitGlobal(const ProfileTrace& trace, const FitOptions& options, View* view, FitResult* out) {
  DLIO_RETURN_NOT_OK(CollectFiles(trace, options, view));
  CollectAccesses(trace, view);
  CollectSteps(trace, options, view);
  for (const DataFile& f : view->files) out->data_files.push_back(f.path);
  Set(out, "name", options.name, FitConfidence::kHigh, "the run's name (--name)");
  if (view->files.empty()) return Status::OK();
  Set(out, "workflow.generate_data", "true", FitConfidence::kHigh,
      "the emulation writes its own dataset to dataset.data_folder");
  Set(out, "workflow.train", "true", FitConfidence::kHigh,
      StrCat(view->accesses.size(), " sample reads of ", view->files.size(), " data files"));
  const bool eval = std::any_of(view->files.begin(), view->files.end(),
                                [](const DataFile& f) { return f.valid; });
  if (eval) {
    Set(out, "workflow.evaluation", "true", FitConfidence::kMedium,
        "files under a valid/eval folder are read");
    Unset(out, "evaluation.eval_time", "0",
          "the compute of evaluation steps is not told apart from training's");
  }
  FitDataset(trace, *view, options, out);
  return Status::OK();
}

void FitPerRank(const ProfileTrace& trace, const View& view, const FitOptions& options,
                FitResult* out) {
  FitReader(trace, view, options, out);
  FitTrain(view, out);
  FitCheckpoint(trace, view, options, out);
  FitSideIo(trace, view, out);
}

void AddViewNotes(const ProfileTrace& trace, const View& view, FitResult* out) {
  int64_t probed = 0;
  for (const DataFile& f : view.files) probed += f.probed;
  out->notes.push_back(StrCat(trace.size(), " events; ", view.files.size(), " data files (.",
                              view.extension, "), ", probed, " of them probed on disk; ",
                              view.accesses.size(), " sample reads in ", view.epochs, " pass",
                              view.epochs == 1 ? "" : "es"));
  out->notes.push_back(
      view.steps_from_compute ? StrCat("steps: ", view.steps.size(), " compute events")
      : view.steps.empty()
          ? std::string("steps: none visible (no compute events, no pauses)")
          : StrCat("steps: ", view.steps.size() + 1, " bursts of reads",
                   view.period.reads > 0 ? StrCat(", a pause after every ", view.period.reads) : "",
                   " (no compute events in the trace)"));
  AddNoiseNotes(view.noise, out);
}

}  // namespace fit

Result<FitResult> FitTrace(const ProfileTrace& trace, const FitOptions& options) {
  for (const std::string& pattern : options.ignore_paths) {
    DLIO_RETURN_NOT_OK(CheckFitIgnorePattern(pattern));
  }
  const fit::RankGroups groups = fit::GroupRanks(trace);
  if (groups.pids.size() > 1) return fit::FitRanks(trace, options, groups);
  fit::View view;
  FitResult out;
  DLIO_RETURN_NOT_OK(fit::FitGlobal(trace, options, &view, &out));
  if (view.files.empty()) {
    DLIO_RETURN_NOT_OK(fit::FitCheckpointOnly(trace, view, options, &out));
    out.notes.push_back(StrCat(trace.size(), " events; no data file read: checkpoint writes only"));
    fit::AddNoiseNotes(view.noise, &out);
    return out;
  }
  fit::FitPerRank(trace, view, options, &out);
  fit::AddViewNotes(trace, view, &out);
  return out;
}

}  // namespace dlio
