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
    if (view.remapped_per_pass && view.epochs > 1 &&
        out->Find("reader.reopen_files_each_epoch") == nullptr) {
      Set(out, "reader.reopen_files_each_epoch", "true", FitConfidence::kMedium,
          "one process maps each data file anew every pass (np.memmap re-created per pass): "
          "the emulation opens and maps its files anew each epoch, where it would keep one "
          "mapping");
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

// A thread that read no sample but opened (nearly) every data file before the readers began: a
// Dataset's __init__ counting samples (h5py.File(path) to read a shape),
// reader.open_files_at_start. Set only where the emulated open reads headers alone as that one did
// (h5py's, native's and mmap's np.load(mmap_mode='r'); the numpy model's open is a whole np.load).
void FitOpenFilesAtStart(const View& view, FitResult* out) {
  const int64_t opened = view.noise.files_opened_at_start;
  const auto files = static_cast<int64_t>(view.files.size());
  if (files == 0 || opened * 10 < files * 9) return;
  const std::string& model = out->request_model;
  if (model != "h5py" && model != "native" && model != "mmap") return;
  Set(out, "reader.open_files_at_start", "true", FitConfidence::kMedium,
      StrCat("a thread that read no sample opened ", opened, " of the ", files,
             " data files, reading only headers, before any sample was read: a Dataset's "
             "__init__ that opens each file to count its samples (fastMRI's SliceDataset)"));
}

void FitReader(const ProfileTrace& trace, const View& view, const FitOptions& options,
               FitResult* out) {
  const ModelGuess model = GuessIoModel(trace, view, FittedFormat(*out), options);
  FitThreads(view, out);
  if (!FitStreamBatch(trace, view, model, out)) FitBatch(trace, view, model, out);
  KeepPassReads(view, SamplesPerAccess(model, *out), out);
  FitShuffle(trace, view, out);
  FitIoModel(trace, view, options, model, out);
  FitOpenPerSample(view, out);
  FitOpenFilesAtStart(view, out);
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
