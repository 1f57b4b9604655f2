// FitTrace stage 3, train: epochs, the compute time between batches, and the steps per epoch.
#include <algorithm>
#include <string>
#include <vector>

#include "dlio/str_cat.h"
#include "profile/fit/fit_internal.h"

namespace dlio::fit {
namespace {

// Training samples read per pass: application sample events, else sample reads (a whole-file
// read of a streaming model stands for all the samples of its file).
int64_t SamplesReadPerPass(const View& view, const FitResult& out) {
  const int64_t passes = std::max(view.epochs, 1);
  if (view.items > 0) return view.items / passes;
  int64_t reads = 0;
  for (const Access& a : view.accesses) reads += IsTrain(view, a);
  const FitEntry* samples = out.Find("dataset.num_samples_per_file");
  if (StreamsWholeFiles(out.request_model) && samples != nullptr && samples->inferred) {
    reads = SaturatingMul(reads, EntryInt(samples, 1));
  }
  return reads / passes;
}

// Steps per epoch below what the dataset holds: the run stopped each epoch early
// (train.total_training_steps caps the steps of every epoch).
void FitStepCap(const View& view, FitResult* out) {
  const FitEntry* files = out->Find("dataset.num_files_train");
  const FitEntry* samples = out->Find("dataset.num_samples_per_file");
  const FitEntry* batch = out->Find("reader.batch_size");
  if (view.steps.empty() || files == nullptr || samples == nullptr || batch == nullptr ||
      !files->inferred || !samples->inferred || !batch->inferred) {
    return;
  }
  const int64_t batches =
      static_cast<int64_t>(view.steps.size()) + (view.steps_from_compute ? 0 : 1);
  const int64_t per_epoch = std::max<int64_t>(batches / std::max(view.epochs, 1), 1);
  // The samples one rank holds (the data is sharded over `view.world` ranks).
  const int64_t held =
      SaturatingMul(EntryInt(files, 0), EntryInt(samples, 0)) / std::max(view.world, 1);
  const int64_t full = held / std::max<int64_t>(EntryInt(batch, 1), 1);
  if (per_epoch * 10 >= full * 9) return;
  // A cap leaves samples unread. Pauses that split a pass finer than its batches (prefetching
  // readers, a loaded machine) are no cap when each pass read (nearly) every sample.
  if (!view.steps_from_compute && SamplesReadPerPass(view, *out) * 10 >= held * 9) return;
  Set(out, "train.total_training_steps", std::to_string(per_epoch), FitConfidence::kMedium,
      StrCat(per_epoch, " steps per epoch where the data holds ", full,
             ": each epoch stopped early"));
}

// ", less the N s ... waited for a CPU within them" when the trace's run-queue delays took any
// time out of the pauses.
std::string RunDelayNote(int64_t run_delay_us, size_t pauses) {
  if (run_delay_us <= 0) return "";
  const double mean = static_cast<double>(run_delay_us) / 1e6 / static_cast<double>(pauses);
  return StrCat(", less the ", Seconds(mean),
                " s a pause the reading thread waited for a CPU on average (run-queue delay)");
}

}  // namespace

void FitTrain(const View& view, FitResult* out) {
  if (view.epochs_from_events) {
    Set(out, "train.epochs", std::to_string(view.epochs), FitConfidence::kHigh,
        StrCat(view.epochs, " application epoch events"));
  } else if (view.reads_per_pass > 1) {
    Set(out, "train.epochs", std::to_string(SaturatingMul(view.epochs, view.reads_per_pass)),
        FitConfidence::kMedium, view.repeated_passes);
  } else if (!view.cropped_passes.empty()) {
    Set(out, "train.epochs", std::to_string(view.epochs), FitConfidence::kMedium,
        view.cropped_passes);
  } else if (!view.mapped_passes.empty()) {
    Set(out, "train.epochs", std::to_string(view.epochs), FitConfidence::kMedium,
        view.mapped_passes);
  } else {
    Set(out, "train.epochs", std::to_string(view.epochs), FitConfidence::kMedium,
        StrCat(view.epochs, " pass", view.epochs == 1 ? "" : "es",
               " over the samples read (a pass ends when a sample is read again)"));
  }
  if (FitWorkerStep(view, out)) return;
  std::vector<double> times;
  int64_t run_delay_us = 0;
  for (const Step& s : view.steps) {
    times.push_back(static_cast<double>(s.end_us - s.start_us - s.run_delay_us) / 1e6);
    run_delay_us += s.run_delay_us;
  }
  if (times.empty()) {
    Unset(out, "train.computation_time", "0",
          view.mapped ? "no compute events, and the data is read through mappings: its rows "
                        "come in as page faults, which leave no pauses between reads"
                      : "no compute events and no pauses between reads");
    return;
  }
  FitStepCap(view, out);
  const MeanStdev m = Moments(times);
  const std::string value = m.stdev > 0.01 * m.mean ? StrCat("{mean: ", Seconds(m.mean),
                                                             ", stdev: ", Seconds(m.stdev), "}")
                                                    : Seconds(m.mean);
  if (view.steps_from_compute) {
    Set(out, "train.computation_time", value, FitConfidence::kHigh,
        StrCat(times.size(), " compute events of the training thread"));
  } else {
    const bool ahead = ReaderCount(view) > 1;
    const std::string where =
        view.period.reads > 0
            ? StrCat(
                  ", one after every ", view.period.reads,
                  " sample reads (gaps within batches, a busy host's stalls among them, left out)")
            : "";
    Set(out, "train.computation_time", value, ahead ? FitConfidence::kLow : FitConfidence::kMedium,
        StrCat(times.size(), " pauses between bursts of sample reads", where,
               RunDelayNote(run_delay_us, times.size()),
               ahead ? " (several readers: compute may hide behind reads)" : ""));
  }
}

}  // namespace dlio::fit
