// FitTrace stage 3, reader.client_costs: `framework` when the traced program was client-bound,
// either inside its reads (each sample read into new memory: the kernel faults in fresh pages
// within the timed read) or between them (its loader's readers busy with their own work, decode,
// copies, collate, while the consumer waits for data and the storage is idle); see
// docs/profiling.md.
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "dlio/str_cat.h"
#include "profile/analysis/interval_union.h"
#include "profile/fit/fit_internal.h"
#include "trace/pfw_codec.h"

namespace dlio::fit {
namespace {

// A reader is client-bound when the median time between two of its sample reads is at least
// this many times the median sample read: two thirds of its busy time or more is not I/O.
constexpr int64_t kClientToIo = 2;
// Fewer gaps between sample reads than this tell nothing.
constexpr size_t kMinGaps = 8;
// Fewer sample reads with page-fault counts (past each reader's first) than this tell nothing.
// The counts are the kernel's, not times, so a loaded host does not change them, and a read
// into new memory faults in nearly all its pages where one into memory in place faults none:
// a few whole-file loads (CIFAR-10's five pickled batches) tell as much as many samples.
constexpr size_t kMinFaultReads = 3;
// A whole-file stream's reader works between two of its reads at least this long on average,
// in microseconds, to be client-bound (pandas parses 256 KiB of CSV in about a millisecond).
constexpr int64_t kStreamWorkUs = 100;
// The sample reads pay fresh pages when at least this share of the pages they filled faulted
// inside the reads, in tenths of a percent (3%). dlio's own reads (client_costs none) fault in
// none after a buffer's first use; a program that allocates per sample (np.load: glibc hands
// back fresh pages for part of its reads) faults in 5-100% (docs/profiling.md). Pages are
// counted as 4 KiB (x86-64's and arm64's usual size).
constexpr int64_t kFreshPermille = 30;
constexpr int64_t kPageBytes = 4096;

// `part` of `whole` in thousandths, rounded down, at most 1000. A trace's counts may be
// anything: counts too large to multiply by 1000 are halved together first.
int64_t PermilleOf(int64_t part, int64_t whole) {
  if (whole <= 0) return 0;
  part = std::clamp<int64_t>(part, 0, whole);
  while (whole > INT64_MAX / 1000) {
    part /= 2;
    whole /= 2;
  }
  return part * 1000 / whole;
}

// The pages the training sample reads filled and how many of them faulted, over the reads
// whose faults the trace holds.
struct FreshPages {
  size_t reads = 0;  // sample reads with fault counts (the tracer's, over 16 KiB or more)
                     // past each reading thread's first
  int64_t pages = 0, faults = 0;
  // Over every sample read with fault counts, each reader's first included: the share the
  // emulation gives its own reads (reader.fresh_page_share), whose buffers are in memory from
  // the start.
  int64_t all_pages = 0, all_faults = 0;
  int64_t Permille() const { return PermilleOf(faults, pages); }
};

// Each reading thread's first sample read is left out: a buffer's first use faults in any
// loader (dlio's own too); only faults that come back tell an allocation per sample.
FreshPages MeasureFreshPages(const View& view) {
  FreshPages f;
  std::set<std::pair<int32_t, int32_t>> readers;
  for (const Access& a : view.accesses) {
    if (!IsTrain(view, a) || a.faulted_bytes < pfw::kFaultsMinBytes) continue;
    const int64_t pages = (a.faulted_bytes + kPageBytes - 1) / kPageBytes;
    f.all_pages = SaturatingAdd(f.all_pages, pages);
    f.all_faults = SaturatingAdd(f.all_faults, std::min(a.faults, pages));
    if (readers.insert({a.pid, a.tid}).second) continue;
    ++f.reads;
    f.pages = SaturatingAdd(f.pages, pages);
    f.faults = SaturatingAdd(f.faults, std::min(a.faults, pages));
  }
  return f;
}

// "6.1% of the 32224 pages that 128 sample reads filled faulted inside the reads (...)".
std::string FreshFigures(const FreshPages& f) {
  const int64_t permille = f.Permille();
  return StrCat(
      permille / 10, ".", permille % 10, "% of the ", f.pages, " pages that ", f.reads,
      " sample reads filled faulted inside the reads (the tracer's counts, each reader's first "
      "read left out; fresh from ",
      kFreshPermille / 10, "%)");
}

// What the readers' timelines show.
struct ReaderTimes {
  std::vector<int64_t> io_us;              // each sample read's time, first read to last
  std::vector<int64_t> gap_us;             // between a reader's consecutive sample reads
  std::vector<std::vector<int64_t>> runs;  // each reader's gaps in each pass (FindPeriod)
  std::vector<profile::Interval> reads;    // when some sample read was in flight
  int64_t readers = 0, processes = 0;
  int64_t first_us = INT64_MAX, last_us = 0;  // the span of the sample reads
};

// Whether [from, to) overlaps one of the steps (sorted by start).
bool HoldsStep(const std::vector<Step>& steps, int64_t from, int64_t to) {
  auto it = std::lower_bound(steps.begin(), steps.end(), to,
                             [](const Step& s, int64_t t) { return s.start_us < t; });
  return it != steps.begin() && std::prev(it)->end_us > from;
}

// The training sample reads of each reading thread, in start order.
std::map<std::pair<int32_t, int32_t>, std::vector<const Access*>> ByReader(const View& view) {
  std::map<std::pair<int32_t, int32_t>, std::vector<const Access*>> by;
  for (const Access& a : view.accesses) {
    if (IsTrain(view, a)) by[{a.pid, a.tid}].push_back(&a);
  }
  return by;
}

// One process's gaps that hold a step are the step's compute, not client work: left out. In
// several processes (DataLoader workers) the steps are another process's, and every gap counts.
ReaderTimes MeasureReaders(const View& view, bool skip_steps) {
  ReaderTimes t;
  std::set<int32_t> pids;
  for (const auto& [reader, reads] : ByReader(view)) {
    ++t.readers;
    pids.insert(reader.first);
    t.runs.emplace_back();
    for (size_t k = 0; k < reads.size(); ++k) {
      const Access& a = *reads[k];
      t.io_us.push_back(a.end_us - a.start_us);
      t.reads.push_back({a.start_us, a.end_us});
      t.first_us = std::min(t.first_us, a.start_us);
      t.last_us = std::max(t.last_us, a.end_us);
      if (k == 0) continue;
      const Access& b = *reads[k - 1];
      if (a.epoch != b.epoch) {
        t.runs.emplace_back();
        continue;
      }
      const int64_t gap = std::max<int64_t>(a.start_us - b.end_us, 0);
      t.runs.back().push_back(gap);
      if (!skip_steps || !HoldsStep(view.steps, b.end_us, a.start_us)) t.gap_us.push_back(gap);
    }
  }
  t.processes = static_cast<int64_t>(pids.size());
  return t;
}

// The share of the reads' span in which no sample read was in flight, in percent.
int64_t IdlePercent(ReaderTimes* t) {
  profile::MergeIntervals(&t->reads);
  const int64_t span = std::max<int64_t>(t->last_us - t->first_us, 1);
  return 100 - profile::Measure(t->reads) * 100 / span;
}

std::string Ms(int64_t us) { return StrCat(Seconds(static_cast<double>(us) / 1e3), " ms"); }

// a / b to two decimals ("32.41", "0.03").
std::string Ratio(int64_t a, int64_t b) {
  const int64_t hundredths = a * 100 / std::max<int64_t>(b, 1);
  return StrCat(hundredths / 100, ".", hundredths % 100 < 10 ? "0" : "", hundredths % 100);
}

// Whether the consumer waits for the readers, and the figures that tell. With compute events
// or the steps of one process's pauses: the readers' client work per batch (batch x gap /
// readers) is at least a step. Several processes without compute events: no period of pauses
// stands in their own reads (FindPeriod), where readers that wait for the consumer show one.
bool ConsumerWaits(const View& view, const ReaderTimes& t, int64_t gap_us, int64_t batch,
                   std::string* why) {
  if (!view.steps_from_compute && t.processes > 1) {
    const Period p = std::max(
        FindPeriod(t.runs, 0), FindPeriod(t.runs, 1),
        [](const Period& a, const Period& b) { return Significance(a) < Significance(b); });
    *why = p.reads > 0 ? StrCat("but they pause after every ", p.reads, " sample reads (median ",
                                Ms(p.end_median_us), " against ", Ms(p.within_median_us),
                                " within): they wait for the consumer")
                       : "and their reads show no pause for the consumer (no period stands)";
    return p.reads == 0;
  }
  double total_us = 0;  // a trace's times are anyone's numbers: summed without overflow
  for (const Step& s : view.steps) total_us += static_cast<double>(s.end_us - s.start_us);
  const auto step_us =
      static_cast<int64_t>(total_us / static_cast<double>(std::max<size_t>(view.steps.size(), 1)));
  const int64_t work_us = SaturatingMul(batch, gap_us) / std::max<int64_t>(t.readers, 1);
  const bool waits = work_us >= step_us;
  *why = StrCat(waits ? "and " : "but ", "their client work per batch (", batch, " x ", Ms(gap_us),
                " / ", t.readers, " reader", t.readers == 1 ? "" : "s", " = ", Ms(work_us), ") is ",
                waits ? "at least" : "less than", " the ", Ms(step_us), " step",
                view.steps_from_compute ? " (compute events)" : " (pauses between batches)");
  return waits;
}

// "the 2 reading processes spend a median 20 ms between two sample reads against ...".
std::string Figures(const ReaderTimes& t, int64_t gap_us, int64_t io_us) {
  const std::string who =
      t.processes > 1 ? StrCat("the ", t.processes, " reading processes")
                      : StrCat("the ", t.readers, " reading thread", t.readers == 1 ? "" : "s");
  return StrCat(who, t.readers == 1 ? " spends" : " spend", " a median ", Ms(gap_us),
                " between two sample reads against ", Ms(io_us), " reading one (",
                Ratio(gap_us, io_us), "x; client-bound from ", kClientToIo, "x and ",
                Ms(kMinPauseUs), ")");
}

// The gap rule: the readers' own work between sample reads sets their pace and the consumer
// waits for them. `note` ends every reason (what the page faults told).
void FitFromGaps(const View& view, const std::string& note, FitResult* out) {
  std::set<int32_t> pids;
  for (const Access& a : view.accesses) pids.insert(a.pid);
  ReaderTimes t = MeasureReaders(view, pids.size() == 1);
  if (t.gap_us.size() < kMinGaps) {
    Unset(out, "reader.client_costs", "none",
          StrCat(t.gap_us.size(),
                 " gaps between sample reads outside steps: too few to tell "
                 "client work from I/O",
                 note));
    return;
  }
  const int64_t gap = Median(t.gap_us), io = std::max<int64_t>(Median(t.io_us), 1);
  const int64_t batch = std::max<int64_t>(EntryInt(out->Find("reader.batch_size"), 1), 1);
  const std::string figures = Figures(t, gap, io);
  if (gap < kClientToIo * io || gap < kMinPauseUs) {
    Unset(out, "reader.client_costs", "none",
          StrCat(figures,
                 gap < kClientToIo * io
                     ? ": reading, not their own work, sets their pace"
                     : ": a loop's own overhead between two reads, not client work",
                 note));
    return;
  }
  std::string why;
  if (!ConsumerWaits(view, t, gap, batch, &why)) {
    Unset(out, "reader.client_costs", "none", StrCat(figures, ", ", why, note));
    return;
  }
  Set(out, "reader.client_costs", "framework", FitConfidence::kMedium,
      StrCat("client-bound: ", figures, ", ", why, "; no sample read in flight ", IdlePercent(&t),
             "% of the time", note));
}

// The reader's own work between the reads of one file stream (pandas' parser between two
// chunks), over the training accesses read in several requests. Medians over the accesses: a
// loaded host's stall lengthens one access, not the median.
struct StreamWork {
  size_t streams = 0;         // accesses of 2 reads or more
  int64_t gaps = 0;           // between their reads
  int64_t read_us = 0;        // the median access's time inside its reads
  int64_t work_us = 0;        // the median access's time between them (its span less its reads)
  int64_t work_per_gap = 0;   // the median access's work per gap
  int64_t ratio_percent = 0;  // the median of work / read time over the accesses, in percent
};

StreamWork MeasureStreams(const View& view) {
  StreamWork w;
  std::vector<int64_t> reads, works, per_gap, ratios;
  for (const Access& a : view.accesses) {
    if (!IsTrain(view, a) || a.reads < 2) continue;
    const int64_t work = std::max<int64_t>(a.end_us - a.start_us - a.read_us, 0);
    w.gaps += a.reads - 1;
    reads.push_back(a.read_us);
    works.push_back(work);
    per_gap.push_back(work / (a.reads - 1));
    ratios.push_back(SaturatingMul(work, 100) / std::max<int64_t>(a.read_us, 1));
  }
  w.streams = reads.size();
  if (w.streams == 0) return w;
  w.read_us = Median(reads);
  w.work_us = Median(works);
  w.work_per_gap = Median(per_gap);
  w.ratio_percent = Median(ratios);
  return w;
}

// A whole-file stream under a model whose library does client work per chunk (a new bytes object
// per read): `framework` when its reader works at least kClientToIo times its read time between
// the reads of one file, at least kStreamWorkUs a gap (a Python loop's own overhead between two
// reads is a few microseconds). Both times are the same thread's, so a loaded host stretches
// them alike. false: no such evidence; the gap rule decides.
bool FitWithinStreams(const View& view, FitResult* out) {
  const StreamWork w = MeasureStreams(view);
  if (w.streams < 2 || w.gaps < static_cast<int64_t>(kMinGaps)) return false;
  if (w.ratio_percent < kClientToIo * 100 || w.work_per_gap < kStreamWorkUs) return false;
  Set(out, "reader.client_costs", "framework", FitConfidence::kMedium,
      StrCat("client-bound within its file streams: the median of ", w.streams,
             " whole-file reads works ", Ms(w.work_us), " between its reads (", Ms(w.work_per_gap),
             " a gap) against ", Ms(w.read_us), " inside them (", w.ratio_percent / 100, ".",
             w.ratio_percent % 100 < 10 ? "0" : "", w.ratio_percent % 100, "x; client-bound from ",
             kClientToIo, "x and ", Ms(kStreamWorkUs),
             " a gap): the library parses each chunk before it reads the next; framework reads "
             "each chunk into new memory as it does"));
  return true;
}

// reader.fresh_page_share: the share over every counted read, in thousandths ("0.456"), so that
// the emulation's reads fault in as many pages as the program's did, whatever its allocator does.
void SetFreshPageShare(const FreshPages& f, FitResult* out) {
  const int64_t permille = PermilleOf(f.all_faults, f.all_pages);
  Set(out, "reader.fresh_page_share",
      StrCat(permille / 1000, ".", permille % 1000 < 100 ? "0" : "",
             permille % 1000 < 10 ? "0" : "", permille % 1000),
      FitConfidence::kMedium,
      StrCat(f.all_faults, " of the ", f.all_pages,
             " pages the sample reads of 16 KiB or more filled faulted inside them, each reader's "
             "first read included: dlio drops as many pages of its reads' destinations first "
             "(those its own allocations leave out of memory count)"));
}

}  // namespace

void FitClientCosts(const View& view, const FitOptions& options, FitResult* out) {
  const FitEntry* model = out->Find("reader.io_model");
  if (model != nullptr && model->inferred && model->value == "native") {
    Unset(out, "reader.client_costs", "none",
          "the reads are dlio's native ones: no framework's client work to pay");
    return;
  }
  // A whole-file stream (tf.data's, pandas') fills a buffer of its own per file, in the program
  // and in dlio alike: its faults tell the buffer's lifetime, not an allocation per sample.
  if (StreamsWholeFiles(out->request_model)) {
    const bool client_work =
        options.model_client_work && options.model_client_work(out->request_model);
    if (client_work && FitWithinStreams(view, out)) return;
    return FitFromGaps(view, "", out);
  }
  const FreshPages fresh = MeasureFreshPages(view);
  if (fresh.reads < kMinFaultReads) return FitFromGaps(view, "", out);
  if (fresh.Permille() < kFreshPermille) {
    FitFromGaps(view, StrCat("; the reads fill memory already in place: ", FreshFigures(fresh)),
                out);
    // Each reader's first read may still fill a buffer new to it (a worker allocates one on
    // its first sample): few reads a reader make that a share the reads' time shows, which
    // dlio's buffers, in place from the start, would not pay.
    if (PermilleOf(fresh.all_faults, fresh.all_pages) >= kFreshPermille) {
      SetFreshPageShare(fresh, out);
    }
    return;
  }
  Set(out, "reader.client_costs", "framework", FitConfidence::kMedium,
      StrCat("client-bound inside its reads: ", FreshFigures(fresh),
             ": the program reads samples into new memory, whose pages the kernel clears within "
             "the timed reads; framework allocates as the program does"));
  SetFreshPageShare(fresh, out);
}

}  // namespace dlio::fit
