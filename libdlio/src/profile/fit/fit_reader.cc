// FitTrace stage 3, reader: threads, batch, transfer size, shuffles, the I/O model.
#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <iterator>
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
namespace {

using ThreadKey = std::pair<int32_t, int32_t>;

int64_t OverlappingCompute(const View& view) {
  if (!view.steps_from_compute) return 0;
  int64_t n = 0;
  for (const Access& a : view.accesses) {
    auto it = std::upper_bound(view.steps.begin(), view.steps.end(), a.end_us,
                               [](int64_t t, const Step& s) { return t <= s.start_us; });
    // The last step starting before the access ends: does it end after the access starts?
    if (it != view.steps.begin() && std::prev(it)->end_us > a.start_us) ++n;
  }
  return n;
}

// The reading threads of each pass; loaders that re-create their workers every epoch read each
// pass with new threads (or processes), so the count per pass is the loader's.
std::map<int32_t, std::set<ThreadKey>> ReadersPerPass(const View& view) {
  std::map<int32_t, std::set<ThreadKey>> per_pass;
  for (const Access& a : view.accesses) per_pass[a.epoch].insert({a.pid, a.tid});
  return per_pass;
}

}  // namespace

int64_t ReaderCount(const View& view) {
  std::map<ThreadKey, std::set<int32_t>> passes_of_thread;
  std::set<ThreadKey> all;
  for (const Access& a : view.accesses) {
    passes_of_thread[{a.pid, a.tid}].insert(a.epoch);
    all.insert({a.pid, a.tid});
  }
  const bool persistent = std::any_of(passes_of_thread.begin(), passes_of_thread.end(),
                                      [](const auto& p) { return p.second.size() > 1; });
  if (persistent || view.epochs == 1) return static_cast<int64_t>(all.size());
  size_t n = 0;
  for (const auto& [pass, readers] : ReadersPerPass(view)) n = std::max(n, readers.size());
  return static_cast<int64_t>(n);
}

namespace {

void FitThreads(const View& view, FitResult* out) {
  std::set<ThreadKey> readers;
  std::set<int32_t> pids;
  for (const Access& a : view.accesses) {
    readers.insert({a.pid, a.tid});
    pids.insert(a.pid);
  }
  const int64_t n = ReaderCount(view);
  const int64_t all = static_cast<int64_t>(readers.size());
  const std::string processes =
      pids.size() > 1 ? StrCat(" in ", pids.size(), " processes (DataLoader-style workers)") : "";
  const std::string renewed =
      all > n ? StrCat("; ", all, " in all: new readers each pass (workers re-created per epoch)")
              : "";
  const bool inline_reads =
      n == 1 && (!view.steps_from_compute ||
                 *readers.begin() == ThreadKey{view.compute_pid, view.compute_tid});
  const int64_t overlapping = OverlappingCompute(view);
  if (inline_reads) {
    Set(out, "reader.pipeline", "sync", FitConfidence::kMedium,
        view.steps_from_compute ? "the thread that computes reads the data itself, between steps"
                                : "one thread reads all data, in bursts between pauses");
  } else if (view.steps_from_compute &&
             overlapping * 100 <= static_cast<int64_t>(view.accesses.size())) {
    Set(out, "reader.pipeline", "sync", FitConfidence::kMedium,
        StrCat(n, " threads read data", processes, ", never while the training thread computes"));
  } else {
    Set(out, "reader.pipeline", "threaded", FitConfidence::kMedium,
        StrCat(n, " threads read data", processes, " apart from the training thread",
               view.steps_from_compute ? StrCat(", ", overlapping, " reads during compute") : ""));
  }
  if (all > n) {
    Set(out, "reader.reopen_files_each_epoch", "true", FitConfidence::kMedium,
        "each pass reads with new threads or processes, which open the files anew");
  }
  Set(out, "reader.read_threads", std::to_string(n), FitConfidence::kHigh,
      StrCat(n, " distinct thread", n == 1 ? "" : "s", " read the data files in a pass", processes,
             renewed));
}

// Samples one access stands for: all of a file's under a model that streams whole files.
int64_t SamplesPerAccess(const ModelGuess& model, const FitResult& out) {
  const FitEntry* samples = out.Find("dataset.num_samples_per_file");
  if (!StreamsWholeFiles(model.model) || samples == nullptr || !samples->inferred) return 1;
  return std::max<int64_t>(EntryInt(samples, 1), 1);
}

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

// reader.batch_size from DataLoader worker processes, when the reads are in several: the period
// of each worker's pauses past its first batch of a pass (FindPeriod); else the burst of one
// worker after its first of a pass when at least 80% of them are equal, else, when each worker
// read a pass in one burst, half that burst (PyTorch's default prefetch_factor of 2 batches).
// False when the reads are in one process or the bursts are uneven.
// The period of each worker's pauses (FindPeriod over WorkerRuns); `skip`: counted past its first
// batch of a pass (a worker's first batches of a pass come back to back when it prefetches them,
// apart when handing each one over takes long on a busy host: the first end counted or not).
Period WorkerPeriod(const View& view, const ReadsByPid& by_pid, bool* skip) {
  const std::vector<std::vector<int64_t>> runs = WorkerRuns(view, by_pid);
  const Period all = FindPeriod(runs, 0), past_first = FindPeriod(runs, 1);
  *skip = Significance(past_first) > Significance(all);
  return *skip ? past_first : all;
}

bool FitWorkerBatch(const View& view, const ModelGuess& model, FitResult* out) {
  const ReadsByPid by_pid = TrainReadsByPid(view);
  if (by_pid.size() < 2) return false;
  const int64_t per_access = SamplesPerAccess(model, *out);
  const std::vector<std::vector<int64_t>> runs = WorkerRuns(view, by_pid);
  bool skip = false;
  const Period p = WorkerPeriod(view, by_pid, &skip);
  if (p.reads > 0) {
    SetBatch(view, out, p.reads * per_access,
             p.ends >= 4 ? FitConfidence::kMedium : FitConfidence::kLow,
             StrCat("each DataLoader worker process pauses after every ", p.reads, " sample reads",
                    skip ? " past its first batch of a pass" : "", " (",
                    PeriodEvidence(p, "within batches"), "): a worker builds whole batches",
                    StreamedNote(model, per_access)));
    return true;
  }
  const WorkerBursts bursts = BurstsPerWorker(view, by_pid, runs);
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

}  // namespace

bool FitWorkerStep(const View& view, FitResult* out) {
  const ReadsByPid by_pid = TrainReadsByPid(view);
  if (by_pid.size() < 2 || view.steps_from_compute) return false;
  bool skip = false;
  const Period p = WorkerPeriod(view, by_pid, &skip);
  if (p.reads <= 0) return false;
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

void FitBatch(const View& view, const ModelGuess& model, FitResult* out) {
  if (!view.steps_from_compute &&
      (FitWorkerBatch(view, model, out) || FitThreadBatch(view, model, out))) {
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

// reader.persistent_workers from whether a reading process reads in more than one pass.
void FitPersistentWorkers(const View& view, FitResult* out) {
  if (view.epochs < 2) return;
  std::map<int32_t, std::set<int32_t>> passes_of_pid;
  for (const Access& a : view.accesses) passes_of_pid[a.pid].insert(a.epoch);
  const bool spans = std::any_of(passes_of_pid.begin(), passes_of_pid.end(),
                                 [](const auto& p) { return p.second.size() > 1; });
  if (spans) {
    Set(out, "reader.persistent_workers", "true", FitConfidence::kMedium,
        "a reading process reads in several passes: the workers live across epochs");
  } else {
    Set(out, "reader.persistent_workers", "false", FitConfidence::kMedium,
        StrCat("each of the ", view.epochs,
               " passes reads in processes of its own: the workers are "
               "forked per epoch"));
  }
}

// Under reader.io_model pytorch (or reader.loader pytorch_workers) the DataLoader worker
// processes are the pipeline: say so beside the reader.pipeline fitted from the threads, which
// such a run does not use.
void NotePipelineUnused(FitResult* out) {
  for (FitEntry& e : out->entries) {
    if (e.key != "reader.pipeline") continue;
    e.reason += "; not used: DataLoader worker processes are the pipeline";
  }
}

void FitIoModel(const ProfileTrace& t, const View& view, const FitOptions& options, ModelGuess g,
                FitResult* out) {
  const std::string request_model = g.model;
  const std::string name = FittedFormat(*out);
  auto available_model = [&](const std::string& model) {
    return model == "native" || !options.io_model_available ||
           options.io_model_available(name, model);
  };
  std::set<int32_t> pids;
  for (const Access& a : view.accesses) pids.insert(a.pid);
  if (pids.size() > 1) {
    // Reads in several processes: a DataLoader's worker processes, each reading as `g` does.
    Set(out, "reader.data_loader", "pytorch", FitConfidence::kMedium,
        StrCat("data is read in ", pids.size(), " processes (DataLoader workers)"));
    // io_model pytorch reads with the format's auto model: only when that is the model seen.
    const std::string under_auto =
        options.io_model_under_auto ? options.io_model_under_auto(name) : g.model;
    if (available_model("pytorch") && (under_auto.empty() || under_auto == g.model)) {
      g = {"pytorch", FitConfidence::kMedium,
           StrCat(pids.size(), " reading processes, each like this: ", g.reason), g.keys};
      FitPersistentWorkers(view, out);
      NotePipelineUnused(out);
    } else if (available_model(g.model) && g.per_process_state) {
      Set(out, "reader.loader", "pytorch_workers", FitConfidence::kMedium,
          StrCat("data is read in ", pids.size(), " processes, each keeping its own ", g.model,
                 " state per open file: DataLoader worker processes reading with io_model ",
                 g.model, " (threads would share one)"));
      FitPersistentWorkers(view, out);
      NotePipelineUnused(out);
    } else if (available_model(g.model)) {
      g.reason += StrCat("; in ", pids.size(),
                         " processes, emulated by reader threads (io_model pytorch, the "
                         "DataLoader's worker processes, reads ",
                         name, " as ", under_auto, ")");
    }
  }
  const bool available = available_model(g.model);
  if (available) {
    out->request_model = g.model == "pytorch" ? request_model : g.model;
    Set(out, "reader.io_model", g.model, g.confidence, g.reason);
    for (const auto& [key, value] : g.keys) {
      Set(out, key, value, g.confidence, "how the request model reads (reader.io_model, above)");
    }
    if (StreamsWholeFiles(g.model) && view.epochs > 1 &&
        out->Find("reader.reopen_files_each_epoch") == nullptr) {
      Set(out, "reader.reopen_files_each_epoch", "true", FitConfidence::kMedium,
          StrCat("every pass reads each file whole again, as ", g.model,
                 " loads a file: the emulation opens (and so loads) its files anew each epoch"));
    }
  } else {
    Unset(out, "reader.io_model", "auto",
          StrCat("looks like ", g.model, " (", g.reason, "), which this build's ", name,
                 " reader does not implement"));
  }
  const auto [common, share] = CommonLargeRead(t, view);
  int64_t multi = 0;
  for (const Access& a : view.accesses) multi += a.large_reads > 1;
  const int64_t n = static_cast<int64_t>(view.accesses.size());
  const bool native = available && g.model == "native";
  if (native && multi * 2 >= n && share >= 0.5) {
    Set(out, "reader.transfer_size", std::to_string(common), FitConfidence::kMedium,
        StrCat("samples are read in requests of ", HumanBytes(static_cast<double>(common)), " (",
               std::llround(share * 100), "% of large reads)"));
  } else if (native) {
    Set(out, "reader.transfer_size", "0",
        multi * 10 <= n ? FitConfidence::kHigh : FitConfidence::kMedium,
        StrCat(n - multi, " of ", n, " sample reads are one request"));
  } else {
    Unset(out, "reader.transfer_size", "0",
          "request sizes follow from the I/O model, not from a transfer size");
  }
}

}  // namespace

// A file of several samples opened anew for each of them (np.fromfile(path, offset=...), or
// open-seek-read-close in a Dataset's __getitem__): under dlio's own reader, which would keep it
// open, reader.open_per_sample. The models that load whole files open per sample already.
void FitOpenPerSample(const View& view, FitResult* out) {
  const FitEntry* samples = out->Find("dataset.num_samples_per_file");
  if (out->request_model != "native" || samples == nullptr || EntryInt(samples, 1) <= 1) return;
  int64_t opens = 0;
  for (const DataFile& f : view.files) opens += f.valid ? 0 : f.opens;
  int64_t reads = 0;
  for (const Access& a : view.accesses) reads += IsTrain(view, a);
  if (reads == 0 || opens * 10 < reads * 9) return;
  Set(out, "reader.open_per_sample", "true", FitConfidence::kMedium,
      StrCat(opens, " opens of the training files for ", reads,
             " sample reads of files of several samples: each sample's load opens its file "
             "(np.fromfile(path, offset=...), or open-seek-read in __getitem__)"));
}

void FitReader(const ProfileTrace& trace, const View& view, const FitOptions& options,
               FitResult* out) {
  const ModelGuess model = GuessIoModel(trace, view, FittedFormat(*out), options);
  FitThreads(view, out);
  if (!FitStreamBatch(trace, view, model, out)) FitBatch(view, model, out);
  KeepPassReads(view, SamplesPerAccess(model, *out), out);
  FitShuffle(trace, view, out);
  FitIoModel(trace, view, options, model, out);
  FitOpenPerSample(view, out);
  FitClientCosts(view, options, out);
  FitH5py(trace, view, out);
  // What an I/O trace does not show, said rather than guessed.
  Unset(out, "reader.prefetch_size", "2",
        "how far reads run ahead is not told apart from the thread count in a trace");
  Unset(out, "reader.computation_threads", "1", "preprocessing threads do no I/O");
  Unset(out, "reader.preprocess_time", "0",
        "CPU time between a read and its use is not in an I/O trace");
  if (view.files.size() > 1 && ReaderCount(view) > 1) {
    Unset(out, "reader.file_interleave", "0",
          "several readers: whether each streams its own file is not inferred");
  }
}

}  // namespace dlio::fit
