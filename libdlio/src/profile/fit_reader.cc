// FitTrace stage 3, reader and train: threads, batch, transfer size, shuffles, the I/O model,
// epochs and the compute time between batches.
#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "dlio/str_cat.h"
#include "profile/fit_internal.h"

namespace dlio::fit {
namespace {

using ThreadKey = std::pair<int32_t, int32_t>;

bool IsTrain(const View& view, const Access& a) {
  return !view.files[static_cast<size_t>(a.file)].valid;
}

// How far a sequence is in ascending order: Spearman's rank correlation of the values with their
// positions (1 sorted, about 0 shuffled, -1 reversed; 1 for fewer than 3 values). Readers taking
// turns read a sorted list slightly out of order, which keeps it near 1. `n` counts the values.
double OrderCorrelation(const std::vector<int64_t>& xs, int64_t* n) {
  const size_t m = xs.size();
  if (m < 3) return 1.0;
  std::vector<size_t> order(m);
  for (size_t i = 0; i < m; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&xs](size_t a, size_t b) { return xs[a] < xs[b]; });
  double d2 = 0;
  for (size_t rank = 0; rank < m; ++rank) {
    const double d = static_cast<double>(rank) - static_cast<double>(order[rank]);
    d2 += d * d;
  }
  *n += static_cast<int64_t>(m);
  const double md = static_cast<double>(m);
  return 1.0 - 6.0 * d2 / (md * (md * md - 1.0));
}
// Sample reads that overlap a compute step (none in a sync pipeline).
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

// Reader threads that read in more than one pass live across epochs: then every distinct
// reading thread counts (in one pass a fast thread may have read everything); when every pass
// reads with new threads (DataLoader workers re-forked per epoch, a tf.data pipeline built per
// epoch), the most readers of one pass.
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
  return std::max<int64_t>(std::stoll(samples->value), 1);
}

// Sets reader.batch_size to b, at most the training samples of an epoch (files x samples per
// file, when fitted): a larger batch would leave an epoch without a step.
void SetBatch(const View& view, FitResult* out, int64_t b, FitConfidence c, std::string reason) {
  const FitEntry* files = out->Find("dataset.num_files_train");
  const FitEntry* samples = out->Find("dataset.num_samples_per_file");
  if (files != nullptr && samples != nullptr && files->inferred && samples->inferred) {
    const int64_t epoch =
        std::stoll(files->value) * std::stoll(samples->value) / std::max(view.world, 1);
    if (epoch > 0 && b > epoch) {
      reason += StrCat("; capped at the ", epoch, " samples of an epoch");
      b = epoch;
      c = FitConfidence::kLow;
    }
  }
  Set(out, "reader.batch_size", std::to_string(b), c, std::move(reason));
}

void FitBatch(const View& view, const ModelGuess& model, FitResult* out) {
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
  const std::string streamed =
      per_access > 1 ? StrCat(" x ", per_access, " samples per file (", model.model,
                              " reads whole files; the batches within one are not visible)")
                     : "";
  SetBatch(view, out, b * per_access, even && !ahead ? FitConfidence::kMedium : FitConfidence::kLow,
           StrCat("median sample reads per burst (", same, " of ", per_burst.size(),
                  " bursts read exactly ", b, ")", streamed,
                  ahead ? "; several readers may read ahead of compute" : ""));
}

// Share of positions at which two passes read the same thing (0 when either is empty).
double SameOrder(const std::vector<int64_t>& a, const std::vector<int64_t>& b, int64_t* n) {
  const size_t m = std::min(a.size(), b.size());
  int64_t same = 0;
  for (size_t i = 0; i < m; ++i) same += a[i] == b[i];
  *n += static_cast<int64_t>(m);
  return m == 0 ? 0 : static_cast<double>(same) / static_cast<double>(m);
}

// Per pass (0 and 1): the order files are first read in, and each file's sample keys in order.
struct PassOrder {
  std::vector<int64_t> files;
  std::map<int32_t, std::vector<int64_t>> keys;
};

std::array<PassOrder, 2> PassOrders(const View& view) {
  std::array<PassOrder, 2> passes;
  std::array<std::vector<bool>, 2> seen{std::vector<bool>(view.files.size(), false),
                                        std::vector<bool>(view.files.size(), false)};
  for (const Access& a : view.accesses) {
    if (a.epoch > 1 || !IsTrain(view, a)) continue;
    PassOrder& p = passes[static_cast<size_t>(a.epoch)];
    p.keys[a.file].push_back(a.key);
    auto s = seen[static_cast<size_t>(a.epoch)].begin() + a.file;
    if (!*s) {
      *s = true;
      p.files.push_back(a.file);
    }
  }
  return passes;
}

// File changes between consecutive sample reads of the first pass (training files), and reads.
std::pair<int64_t, int64_t> FileSwitches(const View& view) {
  int64_t switches = 0, reads = 0;
  int32_t last = -1;
  for (const Access& a : view.accesses) {
    if (a.epoch != 0 || !IsTrain(view, a)) continue;
    switches += last >= 0 && a.file != last;
    last = a.file;
    ++reads;
  }
  return {switches, reads};
}

void FitShuffle(const View& view, FitResult* out) {
  constexpr double kSorted = 0.7;  // rank correlation above which an order is "sorted"
  const std::array<PassOrder, 2> passes = PassOrders(view);
  int64_t n = 0;
  const double files_rho = OrderCorrelation(passes[0].files, &n);
  int64_t compared = 0;
  const double files_same = SameOrder(passes[0].files, passes[1].files, &compared);
  if (compared >= 3 && (files_same >= 0.9 || files_same < 0.5)) {
    const bool same = files_same >= 0.9;
    Set(out, "reader.file_shuffle", same ? "off" : "seed", FitConfidence::kMedium,
        StrCat("the first two passes open files in ", same ? "the same" : "a different", " order (",
               std::llround(files_same * 100), "% of ", compared, " positions agree)"));
  } else {
    Set(out, "reader.file_shuffle", files_rho >= kSorted ? "off" : "seed",
        n >= 8 ? FitConfidence::kMedium : FitConfidence::kLow,
        StrCat("first pass opens ", passes[0].files.size(), " files in ",
               files_rho >= kSorted ? "" : "un", "sorted name order (rank correlation ",
               Seconds(files_rho), ")"));
  }
  n = 0;
  compared = 0;
  double rho_sum = 0, same_sum = 0;
  for (const auto& [file, k] : passes[0].keys) {
    int64_t values = 0, m = 0;
    rho_sum += OrderCorrelation(k, &values) * static_cast<double>(values);
    n += values;
    auto next = passes[1].keys.find(file);
    if (k.size() >= 3 && next != passes[1].keys.end()) {
      same_sum += SameOrder(k, next->second, &m) * static_cast<double>(m);
      compared += m;
    }
  }
  size_t most = 0;
  for (const auto& [file, k] : passes[0].keys) most = std::max(most, k.size());
  if (most < 2) {
    Set(out, "reader.sample_shuffle", "off", FitConfidence::kLow,
        "one sample read per file and pass: the file order is the sample order");
    return;
  }
  const double same = compared == 0 ? 0 : same_sum / static_cast<double>(compared);
  if (compared >= 3 && same >= 0.9) {
    Set(out, "reader.sample_shuffle", "off", FitConfidence::kMedium,
        StrCat("the first two passes read each file's samples in the same order (",
               std::llround(same * 100), "% of ", compared, ")"));
    return;
  }
  // A shuffle over all samples mixes the files; reading file by file switches files rarely.
  const auto [switches, reads] = FileSwitches(view);
  const double files = static_cast<double>(passes[0].files.size());
  const double grouped = files - 1;
  const double mixed = static_cast<double>(reads - 1) * (1.0 - 1.0 / files);
  if (files >= 2 && mixed > grouped &&
      static_cast<double>(switches) > grouped + 0.5 * (mixed - grouped)) {
    Set(out, "reader.sample_shuffle", "seed",
        reads >= 8 ? FitConfidence::kMedium : FitConfidence::kLow,
        StrCat("samples of different files interleave (", switches, " file changes in ", reads,
               " reads of the first pass; file by file would be ", files - 1, ")"));
    return;
  }
  if (n == 0) {
    Set(out, "reader.sample_shuffle", "off", FitConfidence::kLow,
        StrCat("files are read one after another (", switches, " file changes in ", reads,
               " reads) and hold too few samples to tell their order"));
    return;
  }
  const double rho = rho_sum / static_cast<double>(n);
  Set(out, "reader.sample_shuffle", rho >= kSorted ? "off" : "seed",
      n >= 8 ? FitConfidence::kMedium : FitConfidence::kLow,
      StrCat("sample offsets within a file are read in ", rho >= kSorted ? "" : "un",
             "sorted order (rank correlation ", Seconds(rho), " over ", n, " reads)"));
}

void FitIoModel(const ProfileTrace& t, const View& view, const FitOptions& options, ModelGuess g,
                FitResult* out) {
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
    if (available_model("pytorch")) {
      g = {"pytorch", FitConfidence::kMedium,
           StrCat(pids.size(), " reading processes, each like this: ", g.reason)};
    }
  }
  const bool available = available_model(g.model);
  if (available) {
    Set(out, "reader.io_model", g.model, g.confidence, g.reason);
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

void FitReader(const ProfileTrace& trace, const View& view, const FitOptions& options,
               FitResult* out) {
  const ModelGuess model = GuessIoModel(trace, view, FittedFormat(*out));
  FitThreads(view, out);
  FitBatch(view, model, out);
  FitShuffle(view, out);
  FitIoModel(trace, view, options, model, out);
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
  const int64_t full = std::stoll(files->value) * std::stoll(samples->value) /
                       std::max<int64_t>(std::stoll(batch->value), 1) / std::max(view.world, 1);
  if (per_epoch * 10 >= full * 9) return;
  Set(out, "train.total_training_steps", std::to_string(per_epoch), FitConfidence::kMedium,
      StrCat(per_epoch, " steps per epoch where the data holds ", full,
             ": each epoch stopped early"));
}

void FitTrain(const View& view, FitResult* out) {
  if (view.epochs_from_events) {
    Set(out, "train.epochs", std::to_string(view.epochs), FitConfidence::kHigh,
        StrCat(view.epochs, " application epoch events"));
  } else {
    Set(out, "train.epochs", std::to_string(view.epochs), FitConfidence::kMedium,
        StrCat(view.epochs, " pass", view.epochs == 1 ? "" : "es",
               " over the samples read (a pass ends when a sample is read again)"));
  }
  std::vector<double> times;
  for (const Step& s : view.steps)
    times.push_back(static_cast<double>(s.end_us - s.start_us) / 1e6);
  if (times.empty()) {
    Unset(out, "train.computation_time", "0", "no compute events and no pauses between reads");
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
    Set(out, "train.computation_time", value, ahead ? FitConfidence::kLow : FitConfidence::kMedium,
        StrCat(times.size(), " pauses between bursts of sample reads",
               ahead ? " (several readers: compute may hide behind reads)" : ""));
  }
}

}  // namespace dlio::fit
