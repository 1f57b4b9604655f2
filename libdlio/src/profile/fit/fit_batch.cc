// FitTrace stage 3, reader.batch_size: from DataLoader workers' collates, from each worker's
// pauses, from threads that step after every read, from the period of the pauses, from a
// stream's bursts; and the step of a loop fed by workers (FitWorkerStep).
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dlio/str_cat.h"
#include "profile/analysis/analysis_internal.h"
#include "profile/fit/fit_internal.h"

namespace dlio::fit {

// Samples one access stands for: all of a file's under a model that streams whole files.
int64_t SamplesPerAccess(const ModelGuess& model, const FitResult& out) {
  const FitEntry* samples = out.Find("dataset.num_samples_per_file");
  if (!StreamsWholeFiles(model.model) || samples == nullptr || !samples->inferred) return 1;
  return std::max<int64_t>(EntryInt(samples, 1), 1);
}

namespace {

using ThreadKey = std::pair<int32_t, int32_t>;

// Sets reader.batch_size to b, at most the training samples of an epoch (files x samples per
// file, when fitted): a larger batch would leave an epoch without a step.
void SetBatch(const View& view, FitResult* out, int64_t b, FitConfidence c, std::string reason) {
  const FitEntry* files = out->Find("dataset.num_files_train");
  const FitEntry* samples = out->Find("dataset.num_samples_per_file");
  if (files != nullptr && samples != nullptr && files->inferred && samples->inferred) {
    const int64_t epoch =
        SaturatingMul(EntryInt(files, 0), EntryInt(samples, 0)) / std::max(view.world, 1);
    if (epoch > 0 && b > epoch) {
      reason += StrCat("; capped at the ", epoch, " samples of an epoch");
      b = epoch;
      c = FitConfidence::kLow;
    }
  }
  Set(out, "reader.batch_size", std::to_string(b), c, std::move(reason));
}

// The training sample reads of each reading process, in order.
using ReadsByPid = std::map<int32_t, std::vector<const Access*>>;

ReadsByPid TrainReadsByPid(const View& view) {
  ReadsByPid by_pid;
  for (const Access& a : view.accesses) {
    if (IsTrain(view, a)) by_pid[a.pid].push_back(&a);
  }
  return by_pid;
}

// The gaps of each process's reads, one run per process and pass (FindPeriod's runs), less the
// run-queue delay within them.
std::vector<std::vector<int64_t>> WorkerRuns(const View& view, const ReadsByPid& by_pid) {
  std::vector<std::vector<int64_t>> runs;
  for (const auto& [pid, reads] : by_pid) {
    runs.emplace_back();
    for (size_t k = 1; k < reads.size(); ++k) {
      if (reads[k]->epoch != reads[k - 1]->epoch) {
        runs.emplace_back();
      } else {
        runs.back().push_back(GapLessDelay(view, *reads[k - 1], *reads[k]));
      }
    }
  }
  return runs;
}

// Each DataLoader worker process's bursts of sample reads, split where its own reads pause (the
// pause threshold of all workers' gaps) and at each pass: PyTorch sends a worker whole batches,
// `prefetch_factor` of them when an epoch starts, then one each time the loop takes a batch.
struct WorkerBursts {
  std::vector<int64_t> first;   // the first burst of each worker in each pass
  std::vector<int64_t> steady;  // the others
};

WorkerBursts BurstsPerWorker(const View& view, const ReadsByPid& by_pid,
                             const std::vector<std::vector<int64_t>>& runs) {
  std::vector<int64_t> gaps;
  for (const auto& run : runs) gaps.insert(gaps.end(), run.begin(), run.end());
  const int64_t threshold = PauseThreshold(gaps);
  WorkerBursts out;
  for (const auto& [pid, reads] : by_pid) {
    int64_t length = 0;
    bool first = true;
    for (size_t k = 0; k < reads.size(); ++k) {
      const bool new_pass = k > 0 && reads[k]->epoch != reads[k - 1]->epoch;
      const bool pause =
          k > 0 && threshold > 0 && GapLessDelay(view, *reads[k - 1], *reads[k]) > threshold;
      if (k > 0 && (new_pass || pause)) {
        (first ? out.first : out.steady).push_back(length);
        length = 0;
        first = new_pass;
      }
      ++length;
    }
    (first ? out.first : out.steady).push_back(length);
  }
  return out;
}

// " x N samples per file (...)" when one access stands for all of a file's samples.
std::string StreamedNote(const ModelGuess& model, int64_t per_access) {
  return per_access > 1 ? StrCat(" x ", per_access, " samples per file (", model.model,
                                 " reads whole files; the batches within one are not visible)")
                        : "";
}

// How the ends of a period outrank the gaps within it, for reasons; stalls said to be no steps.
std::string PeriodEvidence(const Period& p, std::string_view within) {
  return StrCat(p.ends, " such gaps, median ", Seconds(static_cast<double>(p.end_median_us) / 1e6),
                " s, outrank the ", p.within, " ", within, ", median ",
                Seconds(static_cast<double>(p.within_median_us) / 1e6), " s, in ",
                std::llround(p.score * 100), "% of pairs",
                p.stalls > 0 ? StrCat("; ", p.stalls, p.stalls == 1 ? " gap " : " gaps ", within,
                                      " as long (a busy host's stalls) ",
                                      p.stalls == 1 ? "is no step" : "are no steps")
                             : "");
}

// Bursts past a worker's first that a batch is taken from: fewer are stalls as likely as batches.
constexpr size_t kMinSteadyBursts = 3;

// reader.batch_size from DataLoader worker processes, when the reads are in several: the period
// of each worker's pauses past its first batch of a pass (FindPeriod); else the burst of one
// worker after its first of a pass when at least 80% of them are equal, else, when each worker
// read a pass in one burst, half that burst (PyTorch's default prefetch_factor of 2 batches).
// False when the reads are in one process or the bursts are uneven. With fewer than
// kMinSteadyBursts bursts past the firsts in the run, the batch is left at its default.
bool FitWorkerBatch(const View& view, const ModelGuess& model, FitResult* out) {
  const ReadsByPid by_pid = TrainReadsByPid(view);
  if (by_pid.size() < 2) return false;
  const int64_t per_access = SamplesPerAccess(model, *out);
  const Period& p = view.worker_period;
  const bool skip = view.worker_past_first;
  if (p.reads > 0) {
    SetBatch(view, out, p.reads * per_access,
             p.ends >= 4 ? FitConfidence::kMedium : FitConfidence::kLow,
             StrCat("each DataLoader worker process pauses after every ", p.reads, " sample reads",
                    skip ? " past its first batch of a pass" : "", " (",
                    PeriodEvidence(p, "within batches"), "): a worker builds whole batches",
                    StreamedNote(model, per_access)));
    return true;
  }
  const WorkerBursts bursts = BurstsPerWorker(view, by_pid, WorkerRuns(view, by_pid));
  if (!bursts.steady.empty() && bursts.steady.size() < kMinSteadyBursts) {
    // A burst or two past the first: a busy host's stalls as likely as batches.
    Unset(out, "reader.batch_size", "1",
          StrCat("only ", bursts.steady.size(), " burst", bursts.steady.size() == 1 ? "" : "s",
                 " of a DataLoader worker process past its first of a pass: too few to tell a "
                 "batch from a stall"));
    return true;
  }
  if (!bursts.steady.empty()) {
    const int64_t b = std::max<int64_t>(Median(bursts.steady), 1);
    const auto same = std::count(bursts.steady.begin(), bursts.steady.end(), b);
    // Uneven bursts: pauses within batches (a busy host preempting the workers) blur them.
    if (same * 10 < static_cast<int64_t>(bursts.steady.size()) * 8) return false;
    SetBatch(view, out, b * per_access, FitConfidence::kMedium,
             StrCat("median sample reads per burst of one DataLoader worker process after its "
                    "first of a pass (",
                    same, " of ", bursts.steady.size(), " bursts read exactly ", b,
                    "): a worker builds whole batches"));
    return true;
  }
  const int64_t first = Median(bursts.first);
  const int64_t b = std::max<int64_t>(first / 2, 1);
  SetBatch(
      view, out, b * per_access, FitConfidence::kLow,
      StrCat("each DataLoader worker process read its share of a pass in one burst (median ", first,
             " sample reads): taken as PyTorch's default prefetch_factor of 2 "
             "batches, so a batch is half of it"));
  return true;
}

// The training sample reads of each reading thread between two of its collates, from the marks
// of a traced DataLoader worker (ProfileEvent::shm_created, on the first event the thread made
// after each): a count per batch the thread finished and marked; the reads after its last mark
// are left out, since nothing says that batch ended. Empty when the reading threads' marks
// disagree on how many objects they created (a collate creates one per tensor of a batch, the
// same number every time; a dataset that shares memory per sample adds its own), or when two
// marks of a thread hold no sample read between them. Accesses of small reads alone count only
// when no access has a large read.
std::vector<int64_t> CollatedBatches(const ProfileTrace& t, const View& view) {
  // Where samples take large reads, an access of small reads alone is no sample (a table's row
  // read apart from its sample's access).
  const bool large = std::any_of(view.accesses.begin(), view.accesses.end(),
                                 [&](const Access& a) { return a.large_reads > 0; });
  std::map<ThreadKey, std::vector<int64_t>> reads;
  for (const Access& a : view.accesses) {
    if (IsTrain(view, a) && (a.large_reads > 0 || !large)) {
      reads[{a.pid, a.tid}].push_back(a.start_us);
    }
  }
  std::map<ThreadKey, std::vector<int64_t>> marks;
  std::set<int32_t> created;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t.shm_created[i] <= 0 || !reads.count({t.pid[i], t.tid[i]})) continue;
    marks[{t.pid[i], t.tid[i]}].push_back(t.start_us[i]);
    created.insert(t.shm_created[i]);
  }
  std::vector<int64_t> batches;
  if (created.size() != 1) return batches;
  for (auto& [thread, at] : marks) {
    std::vector<int64_t>& starts = reads[thread];
    std::sort(at.begin(), at.end());
    std::sort(starts.begin(), starts.end());
    std::vector<int64_t> per(at.size() + 1, 0);  // per[k]: reads after k marks
    for (int64_t s : starts) {
      ++per[static_cast<size_t>(std::upper_bound(at.begin(), at.end(), s) - at.begin())];
    }
    per.pop_back();  // after the last mark: no mark ended it
    // A batch with no sample read of its own: batches within one read's sample (an
    // IterableDataset streaming records out of a shard), which counts of reads cannot tell.
    if (std::count(per.begin(), per.end(), 0) > 0) return {};
    batches.insert(batches.end(), per.begin(), per.end());
  }
  return batches;
}

// Collated batches a batch is taken from: fewer say too little.
constexpr size_t kMinCollatedBatches = 3;

// reader.batch_size from the batches DataLoader workers collated into shared memory (PyTorch's
// default_collate stacks a worker's batch into a new shared-memory tensor): the reads between a
// worker thread's collates, whatever the gaps between them (a decode per sample, a busy host).
// The most common count, when more than half the batches hold it and none holds more (the
// smaller ones end an epoch); false when the trace has no such marks or they disagree.
bool FitCollateBatch(const ProfileTrace& t, const View& view, const ModelGuess& model,
                     FitResult* out) {
  const std::vector<int64_t> batches = CollatedBatches(t, view);
  if (batches.size() < kMinCollatedBatches) return false;
  std::map<int64_t, size_t> counts;
  for (int64_t n : batches) ++counts[n];
  const auto mode =
      std::max_element(counts.begin(), counts.end(), [](const auto& a, const auto& b) {
        return a.second < b.second || (a.second == b.second && a.first < b.first);
      });
  const int64_t largest = counts.rbegin()->first;
  if (mode->second * 2 <= batches.size() || largest != mode->first) return false;
  const int64_t per_access = SamplesPerAccess(model, *out);
  SetBatch(view, out, mode->first * per_access, FitConfidence::kHigh,
           StrCat("each DataLoader worker collated a batch into shared memory after every ",
                  mode->first, " sample reads (", mode->second, " of ", batches.size(), " batches",
                  mode->second < batches.size() ? ", the smaller ones ending a pass" : "",
                  "; the tracer counts each worker thread's shm_open creations between its "
                  "calls): a worker builds whole batches",
                  StreamedNote(model, per_access)));
  return true;
}

}  // namespace

Period FindWorkerPeriod(const View& view, bool* past_first) {
  const ReadsByPid by_pid = TrainReadsByPid(view);
  *past_first = false;
  if (by_pid.size() < 2) return Period{};
  const std::vector<std::vector<int64_t>> runs = WorkerRuns(view, by_pid);
  // A worker's first batches of a pass come back to back when it prefetches them, apart when
  // handing each one over takes long on a busy host: the first end counted or not.
  const Period all = FindPeriod(runs, 0), past_first_batch = FindPeriod(runs, 1);
  *past_first = Significance(past_first_batch) > Significance(all);
  return *past_first ? past_first_batch : all;
}

bool FitWorkerStep(const View& view, FitResult* out) {
  const ReadsByPid by_pid = TrainReadsByPid(view);
  const Period& p = view.worker_period;
  if (by_pid.size() < 2 || view.steps_from_compute || p.reads <= 0) return false;
  // Each worker's batch starts in each pass, past the first two (prefetched); the workers of a
  // pass.
  const auto b = static_cast<size_t>(p.reads);
  std::vector<int64_t> cycles;
  std::map<int32_t, std::set<int32_t>> pids_of_pass;
  for (const auto& [pid, reads] : by_pid) {
    for (size_t first = 0, k = 1; k <= reads.size(); ++k) {
      if (k < reads.size() && reads[k]->epoch == reads[first]->epoch) continue;
      pids_of_pass[reads[first]->epoch].insert(pid);
      for (size_t at = first + 3 * b; at < k; at += b) {
        cycles.push_back(reads[at]->start_us - reads[at - b]->start_us);
      }
      first = k;
    }
  }
  if (cycles.size() < 4) return false;
  std::vector<int64_t> workers;
  for (const auto& [pass, pids] : pids_of_pass)
    workers.push_back(static_cast<int64_t>(pids.size()));
  const int64_t w = std::max<int64_t>(Median(workers), 1);
  const double cycle = static_cast<double>(Median(cycles)) / 1e6;
  const double step = cycle / static_cast<double>(w);
  Set(out, "train.computation_time", Seconds(step), FitConfidence::kMedium,
      StrCat("each of the ", w, " DataLoader worker processes of a pass begins a batch of ",
             p.reads, " sample reads every ", Seconds(cycle), " s (median of ", cycles.size(),
             " batches past each worker's first two of a pass, which it prefetches): the loop "
             "takes a batch every ",
             Seconds(step), " s, its work with each"));
  return true;
}

namespace {

// reader.batch_size from reading threads of one process that each pause after nearly every sample
// read of their own (at least 80% of each thread's gaps within a pass above the pause threshold
// of all of them): a step per sample read in each thread, one sample per thread a step. The
// merged order's bursts then hold 1 to `threads` reads as the threads drift in and out of step
// (a busy host drifts them more), and are no batches. False otherwise (several processes, one
// thread, too few gaps, or pauses after some reads only).
bool FitThreadBatch(const View& view, const ModelGuess& model, FitResult* out) {
  std::map<ThreadKey, int32_t> thread_index;
  ReadsByPid by_thread;  // keyed by the thread's index
  std::set<int32_t> pids;
  for (const Access& a : view.accesses) {
    if (!IsTrain(view, a)) continue;
    pids.insert(a.pid);
    const auto slot =
        thread_index.emplace(ThreadKey{a.pid, a.tid}, static_cast<int32_t>(thread_index.size()));
    by_thread[slot.first->second].push_back(&a);
  }
  if (pids.size() != 1 || by_thread.size() < 2) return false;
  std::vector<int64_t> gaps;
  for (const auto& run : WorkerRuns(view, by_thread))
    gaps.insert(gaps.end(), run.begin(), run.end());
  const int64_t threshold = PauseThreshold(gaps);
  if (gaps.size() < 8 || threshold <= 0) return false;
  const auto pauses =
      std::count_if(gaps.begin(), gaps.end(), [threshold](int64_t g) { return g > threshold; });
  if (pauses * 10 < static_cast<int64_t>(gaps.size()) * 8) return false;
  const int64_t threads = ReaderCount(view);
  const int64_t per_access = SamplesPerAccess(model, *out);
  SetBatch(view, out, threads * per_access, FitConfidence::kLow,
           StrCat("each of the ", threads, " reading threads pauses after its own sample reads (",
                  pauses, " of ", gaps.size(), " gaps within a thread's pass over ",
                  Seconds(static_cast<double>(threshold) / 1e6),
                  " s): a step per read in each thread, one sample per thread a step (the merged "
                  "order's bursts, 1 to ",
                  threads, " reads as the threads drift in and out of step, are no batches)",
                  StreamedNote(model, per_access)));
  return true;
}

// reader.batch_size from the period of the pauses between sample reads (CollectSteps).
void FitPeriodBatch(const View& view, const ModelGuess& model, FitResult* out) {
  const Period& p = view.period;
  const bool ahead = ReaderCount(view) > 1;  // workers read ahead: a pause may be a full queue
  const int64_t per_access = SamplesPerAccess(model, *out);
  SetBatch(view, out, p.reads * per_access,
           p.ends >= 4 && !ahead ? FitConfidence::kMedium : FitConfidence::kLow,
           StrCat("a pause after every ", p.reads, " sample reads", p.per_pass ? " of a pass" : "",
                  " (", PeriodEvidence(p, "within batches"), ")", StreamedNote(model, per_access),
                  ahead ? "; several readers may read ahead of compute" : ""));
}

}  // namespace

void FitBatch(const ProfileTrace& t, const View& view, const ModelGuess& model, FitResult* out) {
  if (view.mapped && !view.steps_from_compute) {
    Unset(out, "reader.batch_size", "1",
          "no compute events, and the data is read through mappings: its rows come in as page "
          "faults, which leave no reads to count a batch by");
    return;
  }
  if (!view.steps_from_compute &&
      (FitCollateBatch(t, view, model, out) || FitWorkerBatch(view, model, out) ||
       FitThreadBatch(view, model, out))) {
    return;
  }
  if (view.steps.empty()) {
    Unset(out, "reader.batch_size", "1",
          "no compute events and no pause between reads stands out: batches are not visible");
    return;
  }
  int64_t reads = 0;
  if (view.items > 0) {
    for (const DataFile& f : view.files) reads += f.valid ? 0 : f.items;
  } else {
    for (const Access& a : view.accesses) reads += IsTrain(view, a);
  }
  if (view.steps_from_compute) {
    const double per_step = static_cast<double>(reads) / static_cast<double>(view.steps.size());
    const int64_t b = std::max<int64_t>(std::llround(per_step), 1);
    const bool even = std::abs(per_step - static_cast<double>(b)) <= 0.1 * static_cast<double>(b);
    SetBatch(view, out, b, even ? FitConfidence::kMedium : FitConfidence::kLow,
             StrCat(reads, " sample reads / ", view.steps.size(), " compute steps"));
    return;
  }
  if (view.period.reads > 0) {
    FitPeriodBatch(view, model, out);
    return;
  }
  // Sample reads between consecutive pauses.
  std::vector<int64_t> per_burst(view.steps.size() + 1, 0);
  size_t burst = 0;
  for (const Access& a : view.accesses) {
    while (burst < view.steps.size() && a.start_us >= view.steps[burst].end_us) ++burst;
    per_burst[burst] += IsTrain(view, a);
  }
  const int64_t b = std::max<int64_t>(Median(per_burst), 1);
  const auto same = std::count(per_burst.begin(), per_burst.end(), b);
  const bool even = same * 10 >= static_cast<int64_t>(per_burst.size()) * 8;
  const bool ahead = ReaderCount(view) > 1;  // workers read ahead: a burst may be many batches
  const int64_t per_access = SamplesPerAccess(model, *out);
  SetBatch(view, out, b * per_access, even && !ahead ? FitConfidence::kMedium : FitConfidence::kLow,
           StrCat("median sample reads per burst (", same, " of ", per_burst.size(),
                  " bursts read exactly ", b, "; no period of pauses stands out)",
                  StreamedNote(model, per_access),
                  ahead ? "; several readers may read ahead of compute" : ""));
}

namespace {

// The gap above which a worker's stream paused: PauseThreshold's jump, else the split of the gaps'
// logarithms that best separates two classes (Otsu's), when the upper class's mean is at least 8x
// the lower's and its smallest gap at least kMinPauseUs (a stream's gaps run from microseconds to
// pauses of milliseconds with no single jump between them); 0 when none stands out.
int64_t StreamPause(std::vector<int64_t> gaps) {
  if (const int64_t jump = PauseThreshold(gaps); jump > 0) return jump;
  std::sort(gaps.begin(), gaps.end());
  std::vector<double> logs;
  for (const int64_t g : gaps)
    logs.push_back(std::log2(static_cast<double>(std::max<int64_t>(g, 1))));
  const double total = std::accumulate(logs.begin(), logs.end(), 0.0);
  double below = 0, best = 0;
  int64_t pause = 0;
  for (size_t i = 0; i + 1 < logs.size(); ++i) {
    below += logs[i];
    const double n0 = static_cast<double>(i + 1), n1 = static_cast<double>(logs.size() - i - 1);
    const double m0 = below / n0, m1 = (total - below) / n1;
    const double between = n0 * n1 * (m1 - m0) * (m1 - m0);
    if (between > best && m1 - m0 >= 3 && gaps[i + 1] >= kMinPauseUs) {
      best = between;
      pause = (gaps[i] + gaps[i + 1]) / 2;
    }
  }
  return pause;
}

}  // namespace

// The batch of a loader that streams whole shards (WebDataset over tarfile): one read of a file
// stands for all of its samples, so the batch is no count of reads. A DataLoader worker streams a
// batch's samples, then waits for the next task until the training loop takes a batch: the batch
// is the bytes a worker streams between two pauses (PauseThreshold of its gaps; each process's
// first burst, its prefetched batches, and its last left out) over a sample's stored bytes.
bool FitStreamBatch(const ProfileTrace& t, const View& view, const ModelGuess& model,
                    FitResult* out) {
  const FitEntry* record = out->Find("dataset.record_length_bytes");
  if (model.model != "tarfile" || record == nullptr || !record->inferred) return false;
  const int64_t sample_bytes = EntryInt(record, 0);
  struct Read {
    int64_t start_us, end_us, bytes;
  };
  std::map<int32_t, std::vector<Read>> by_pid;
  for (size_t i : view.data_events) {
    const int64_t bytes = t.kind[i] == OpKind::kRead ? profile::TransferredBytes(t, i) : 0;
    if (bytes > 0) by_pid[t.pid[i]].push_back({t.start_us[i], t.start_us[i] + t.dur_us[i], bytes});
  }
  std::vector<int64_t> gaps;
  for (const auto& [pid, reads] : by_pid) {
    for (size_t i = 1; i < reads.size(); ++i)
      gaps.push_back(reads[i].start_us - reads[i - 1].end_us);
  }
  const int64_t pause = StreamPause(gaps);
  if (sample_bytes <= 0 || pause == 0) return false;
  std::vector<int64_t> bursts;  // bytes a process streamed between two pauses
  for (const auto& [pid, reads] : by_pid) {
    int64_t bytes = 0;
    bool first = true;
    for (size_t i = 0; i < reads.size(); ++i) {
      if (i > 0 && reads[i].start_us - reads[i - 1].end_us > pause) {
        if (!first) bursts.push_back(bytes);
        first = false;
        bytes = 0;
      }
      bytes += reads[i].bytes;
    }
  }
  if (bursts.size() < 3) return false;
  const int64_t median = Median(bursts);
  const int64_t b = std::max<int64_t>(std::llround(static_cast<double>(median) / sample_bytes), 1);
  SetBatch(view, out, b, FitConfidence::kLow,
           StrCat("a worker streams a median ", HumanBytes(static_cast<double>(median)),
                  " between two pauses (", bursts.size(), " bursts, pauses over ", pause, " us), ",
                  b, " samples of ", HumanBytes(static_cast<double>(sample_bytes)),
                  " stored: whole-shard streams, the batch from the bytes"));
  return true;
}

}  // namespace dlio::fit
