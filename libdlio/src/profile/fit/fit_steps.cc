// FitTrace stage 2, the steps: compute events when the trace has them, else the pauses between
// bursts of sample reads, by their period (where they fall) or a threshold on their length.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "dlio/profile_analysis.h"
#include "profile/analysis/analysis_internal.h"
#include "profile/fit/fit_internal.h"

namespace dlio::fit {
namespace {

using StepThread = std::pair<int32_t, int32_t>;  // (pid, tid)

// The run-queue delay within each gap of the sample reads' timeline, all readers merged:
// delays[k] is the delay the thread of read k+1 accrued from the end of reads 0..k to the start of
// read k+1 (0 when they overlap, or the trace has no delays).
std::vector<int64_t> TimelineDelays(const RunDelays& run_delays, const std::vector<Access>& acc) {
  std::vector<int64_t> delays;
  int64_t end = acc.empty() ? 0 : acc.front().end_us;
  for (size_t k = 1; k < acc.size(); ++k) {
    delays.push_back(run_delays.Within(acc[k].pid, acc[k].tid, end, acc[k].start_us));
    end = std::max(end, acc[k].end_us);
  }
  return delays;
}

// The gaps of that timeline less those delays: gaps[k] is the time from the end of reads 0..k to
// the start of read k+1 that the reading thread did not wait for a CPU (0 when they overlap). A
// busy host's stalls are such waits: without them a loaded run's gaps are a quiet run's.
std::vector<int64_t> TimelineGaps(const std::vector<Access>& acc,
                                  const std::vector<int64_t>& delays) {
  std::vector<int64_t> gaps;
  int64_t end = acc.empty() ? 0 : acc.front().end_us;
  for (size_t k = 1; k < acc.size(); ++k) {
    gaps.push_back(std::max<int64_t>(acc[k].start_us - end - delays[k - 1], 0));
    end = std::max(end, acc[k].end_us);
  }
  return gaps;
}

// FindPeriod's runs counted from each pass's first read: the gaps within each pass (those
// between two passes are left out).
std::vector<std::vector<int64_t>> PassRuns(const std::vector<Access>& acc,
                                           const std::vector<int64_t>& gaps) {
  std::vector<std::vector<int64_t>> runs(1);
  for (size_t k = 1; k < acc.size(); ++k) {
    if (acc[k].epoch != acc[k - 1].epoch) {
      runs.emplace_back();
    } else {
      runs.back().push_back(gaps[k - 1]);
    }
  }
  return runs;
}

// The steps at the ends of p's periods, whatever their length (a short pause there is still a
// step: the counts of steps, and of checkpoints between them, stay right); counted per pass, the
// gap between two passes is a step too when longer than p.split_us (compute after a pass's
// last, possibly partial, batch).
void StepsFromPeriod(const std::vector<Access>& acc, const std::vector<int64_t>& gaps,
                     const std::vector<int64_t>& delays, const Period& p, View* view) {
  int64_t end = acc.front().end_us;
  int64_t nth = 0;  // reads before read k, counted from the pass's first (or the trace's)
  for (size_t k = 1; k < acc.size(); ++k) {
    ++nth;
    bool step = false;
    if (p.per_pass && acc[k].epoch != acc[k - 1].epoch) {
      nth = 0;
      step = gaps[k - 1] > p.split_us;
    } else {
      step = nth % p.reads == 0;
    }
    if (step) view->steps.push_back({end, std::max(end, acc[k].start_us), delays[k - 1]});
    end = std::max(end, acc[k].end_us);
  }
}
}  // namespace

// The gap (microseconds) above which a pause between reads is compute, 0 when none stands out:
// the biggest jump (at least 4x) between consecutive sorted gaps of at least 500 us, or every
// gap when all are that long.
int64_t PauseThreshold(std::vector<int64_t> gaps) {
  constexpr int64_t kMinComputeGapUs = kMinPauseUs;
  std::sort(gaps.begin(), gaps.end());
  if (gaps.empty()) return 0;
  if (gaps.front() >= kMinComputeGapUs) return gaps.front() / 2;
  double best_ratio = 4.0;
  int64_t threshold = 0;
  for (size_t i = 0; i + 1 < gaps.size(); ++i) {
    if (gaps[i + 1] < kMinComputeGapUs) continue;
    const double ratio = static_cast<double>(gaps[i + 1]) / std::max<int64_t>(gaps[i], 1);
    if (ratio >= best_ratio) {
      best_ratio = ratio;
      threshold = static_cast<int64_t>(std::sqrt(
          static_cast<double>(std::max<int64_t>(gaps[i], 1)) * static_cast<double>(gaps[i + 1])));
    }
  }
  return threshold;
}

void CollectSteps(const ProfileTrace& t, const FitOptions& options, View* view) {
  ComputeClassifier compute(t);
  std::map<StepThread, std::vector<Step>> by_thread;
  for (size_t i = 0; i < t.size(); ++i) {
    if (compute.IsCompute(i)) {
      by_thread[{t.pid[i], t.tid[i]}].push_back({t.start_us[i], t.start_us[i] + t.dur_us[i]});
    }
  }
  for (auto& [thread, steps] : by_thread) {
    if (steps.size() > view->steps.size()) {
      view->steps = std::move(steps);
      view->compute_pid = thread.first;
      view->compute_tid = thread.second;
    }
  }
  if (!view->steps.empty()) {
    view->steps_from_compute = true;
    std::sort(view->steps.begin(), view->steps.end(),
              [](const Step& a, const Step& b) { return a.start_us < b.start_us; });
    return;
  }
  // No compute events: the pauses between bursts of sample reads, by their period (where they
  // fall), else by a threshold on their length; none where the samples leave no reads (mapped).
  const auto& acc = view->accesses;
  if (acc.empty() || view->mapped) return;
  const std::vector<int64_t> delays = TimelineDelays(view->run_delays, acc);
  const std::vector<int64_t> gaps = TimelineGaps(acc, delays);
  // In several processes (DataLoader workers) a pause of the merged timeline is no consumer's:
  // FitWorkerBatch looks for the period of each worker's own reads.
  const bool one_process =
      std::all_of(acc.begin(), acc.end(), [&](const Access& a) { return a.pid == acc[0].pid; });
  if (options.burst_gap_us <= 0 && one_process) {
    const Period by_pass = FindPeriod(PassRuns(acc, gaps), 0);
    Period whole = FindPeriod({gaps}, 0);
    whole.per_pass = false;
    const Period& p = Significance(whole) > Significance(by_pass) ? whole : by_pass;
    if (p.reads > 0) {
      view->period = p;
      StepsFromPeriod(acc, gaps, delays, p, view);
      return;
    }
  }
  if (!one_process) view->worker_period = FindWorkerPeriod(*view, &view->worker_past_first);
  const int64_t threshold = options.burst_gap_us > 0 ? options.burst_gap_us : PauseThreshold(gaps);
  if (threshold <= 0) return;
  int64_t end = acc.front().end_us;
  for (size_t k = 1; k < acc.size(); ++k) {
    if (gaps[k - 1] > threshold) view->steps.push_back({end, acc[k].start_us, delays[k - 1]});
    end = std::max(end, acc[k].end_us);
  }
}

}  // namespace dlio::fit
