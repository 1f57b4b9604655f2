// FitTrace stage 2: the data events as sample reads (accesses) and the passes over the data
// (epochs); the steps are fit_steps.cc's.
#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "dlio/profile_analysis.h"
#include "profile/analysis/analysis_internal.h"
#include "profile/fit/fit_internal.h"

namespace dlio::fit {
namespace {

using ThreadKey = std::pair<int32_t, int32_t>;  // (pid, tid)

struct ThreadFileState {
  int32_t access = -1;  // open access, -1 none
  int64_t last_end = -1;
  bool opened = false;  // an open came since the last access began
  bool marked = false;  // the access holds its file's mark (TransactionMarks)
  // Since the last open: the accesses begun, the byte ranges read, whether one was read again.
  std::vector<int32_t> session;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  std::vector<int64_t> calls;  // its reads' offsets and its lseeks, in order (DataFile::loads)
  bool from_open = false;      // the session began with an open
  bool reread = false;
};

constexpr size_t kMaxLoadReads = 256;  // a session of more reads is no one load

// Notes a read of [offset, offset + size) in the session of `s`.
void NoteSessionRead(int64_t offset, int64_t size, ThreadFileState* s) {
  if (offset < 0 || size <= 0 || s->ranges.size() >= kMaxLoadReads) return;
  for (const auto& [a, b] : s->ranges) {
    if (offset < b && a < offset + size) s->reread = true;
  }
  s->ranges.emplace_back(offset, offset + size);
}

// At a close: a session that read parts of its file again (a library re-reading its own headers:
// numpy's np.load of an npz opens the member twice, after reading the end records) and read the
// whole file is one load, however its reads jumped or stalled: its accesses after the first are
// folded into the first and marked dead (bytes -1) for BuildAccesses to drop. A loader reading
// records of an open file reads none twice and keeps one access per record.
void FoldSessionLoad(int64_t extent, ThreadFileState* s, std::vector<Access>* accesses) {
  std::vector<std::pair<int64_t, int64_t>> r = s->ranges;
  std::sort(r.begin(), r.end());
  int64_t covered = 0, end = 0;
  for (const auto& [a, b] : r) {
    covered += std::max<int64_t>(0, b - std::max(a, end));
    end = std::max(end, b);
  }
  if (!s->reread || s->session.size() < 2 || s->ranges.size() >= kMaxLoadReads || extent <= 0 ||
      covered * 10 < extent * 9) {
    return;
  }
  Access& first = (*accesses)[static_cast<size_t>(s->session.front())];
  for (size_t k = 1; k < s->session.size(); ++k) {
    Absorb(&first, &(*accesses)[static_cast<size_t>(s->session[k])]);
  }
}

// At a close: the calls of a session that began with an open, as one load of the file, for the
// first kKeptLoads such sessions of each file.
constexpr size_t kKeptLoads = 16;
void KeepLoad(const ThreadFileState& s, DataFile* file) {
  if (!s.from_open || s.calls.empty() || s.calls.size() >= kMaxLoadReads ||
      file->loads.size() >= kKeptLoads) {
    return;
  }
  file->loads.push_back(s.calls);
}

// Notes call `i` of the session of `s` (DataFile::loads).
void NoteSessionCall(const ProfileTrace& t, size_t i, ThreadFileState* s) {
  if (s->calls.size() >= kMaxLoadReads) return;
  if (t.kind[i] == OpKind::kSeek) s->calls.push_back(DataFileInfo::kLoadSeek);
  if (t.kind[i] == OpKind::kRead && t.offset[i] >= 0) s->calls.push_back(t.offset[i]);
}

void ResetSession(ThreadFileState* s) {
  s->session.clear();
  s->ranges.clear();
  s->calls.clear();
  s->reread = false;
}

bool NameHas(const ProfileTrace& t, int32_t id, std::string_view word) {
  if (id == ProfileTrace::kNoString) return false;
  const std::string& s = t.String(id);
  auto lower_eq = [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == static_cast<unsigned char>(b);
  };
  return std::search(s.begin(), s.end(), word.begin(), word.end(), lower_eq) != s.end();
}

// Per data file: the largest read (a file whose reads are all small has only "large" ones).
std::vector<int64_t> LargestReads(const ProfileTrace& t, const View& view,
                                  const std::unordered_map<int32_t, int32_t>& file_of) {
  std::vector<int64_t> largest(view.files.size(), 0);
  for (size_t i : view.data_events) {
    if (t.kind[i] != OpKind::kRead) continue;
    int64_t& l = largest[static_cast<size_t>(file_of.at(t.path[i]))];
    l = std::max(l, profile::TransferredBytes(t, i));
  }
  return largest;
}

// Application epoch events (dlio's ai.pipeline.epoch, DLIO-benchmark's epoch blocks) of the
// process that has the most, by start time.
std::vector<int64_t> EpochStarts(const ProfileTrace& t, const Noise& noise) {
  std::map<int32_t, std::vector<int64_t>> by_pid;
  for (size_t i = 0; i < t.size(); ++i) {
    if (!IsAppEvent(noise, t, i) || !NameHas(t, t.name[i], "epoch")) continue;
    by_pid[t.pid[i]].push_back(t.start_us[i]);
  }
  std::vector<int64_t> best;
  for (auto& [pid, starts] : by_pid) {
    if (starts.size() > best.size()) best = std::move(starts);
  }
  std::sort(best.begin(), best.end());
  return best;
}

// Passes over the accesses `which` (indices into view->accesses, in start order): a new one
// begins when a sample of the current pass is read again after at least 90% of their distinct
// samples were read in it. Sets their epochs; returns the passes.
int32_t AssignPassesOf(const std::vector<size_t>& which, View* view) {
  std::set<std::pair<int32_t, int64_t>> all, current;
  for (size_t k : which) all.insert({view->accesses[k].file, view->accesses[k].key});
  int32_t epoch = 0;
  for (size_t k : which) {
    Access& a = view->accesses[k];
    const std::pair<int32_t, int64_t> key{a.file, a.key};
    if (current.count(key) && static_cast<double>(current.size()) >= 0.9 * all.size()) {
      ++epoch;
      current.clear();
    }
    current.insert(key);
    a.epoch = epoch;
  }
  return epoch + 1;
}

// Whether the passes AssignPassesOf gave the accesses `which` (one rank's) are passes over one
// set of samples: at most 10% of the reads read a sample again within their pass, and at most
// 10% of the later passes' reads are of samples the first pass did not read. A rank that reads
// its own shard every epoch meets both. One that reads another shard each epoch (a global
// shuffle, then every N-th sample: PyTorch's DistributedSampler) has no passes of its own: the
// 90% rule ends its "first pass" late in its second epoch or after, with re-reads inside it
// (many with 2 ranks), and its "second" holds samples the first never read (most with many).
bool PassesOverOneSet(const std::vector<size_t>& which, const View& view) {
  std::set<std::tuple<int32_t, int32_t, int64_t>> seen;  // pass, file, sample
  size_t again = 0, later = 0, stray = 0;
  for (size_t k : which) {
    const Access& a = view.accesses[k];
    again += !seen.insert({a.epoch, a.file, a.key}).second;
    if (a.epoch == 0) continue;
    ++later;
    stray += !seen.count({0, a.file, a.key});
  }
  return again * 10 <= which.size() && stray * 10 <= later;
}

// Each reader's own passes, when every reader (a group of accesses) re-reads its samples the same
// number of times (more than once), once each per pass; false otherwise (the accesses' epochs are
// then to be assigned again).
bool PassesPerReader(const std::map<std::array<int32_t, 2>, std::vector<size_t>>& readers,
                     View* view) {
  if (readers.size() < 2) return false;
  std::set<int32_t> passes;
  bool one_set = true;
  for (const auto& [reader, which] : readers) {
    passes.insert(AssignPassesOf(which, view));
    one_set = one_set && PassesOverOneSet(which, *view);
  }
  if (passes.size() != 1 || *passes.begin() <= 1 || !one_set) return false;
  view->epochs = *passes.begin();
  return true;
}

// Passes over the data. With several ranks, each rank's own when every rank re-reads its
// samples the same number of times, once each per pass: ranks run unsynchronized, and on a busy
// host one starts its next pass while another ends this one, which the merged order takes for a
// pass that ends early (a rank's reads would begin a pass the others' leftovers end). Else, the
// same with each reading thread for a reader (threads that keep their own files every pass,
// each at its own pace: a C loader's pthreads). Otherwise (one reader, ranks or threads that
// read other samples each pass, new threads each pass) over all the accesses.
void AssignPasses(const ProfileTrace& t, View* view) {
  std::map<std::array<int32_t, 2>, std::vector<size_t>> by_rank, by_thread;
  std::vector<size_t> every;
  bool ranked = true;
  for (size_t k = 0; k < view->accesses.size(); ++k) {
    every.push_back(k);
    const Access& a = view->accesses[k];
    auto rank = t.ranks.find(a.pid);
    ranked = ranked && rank != t.ranks.end();
    if (rank != t.ranks.end()) by_rank[{rank->second, 0}].push_back(k);
    by_thread[{a.pid, a.tid}].push_back(k);
  }
  if (ranked && PassesPerReader(by_rank, view)) {
    view->passes_per_rank = true;
    return;
  }
  if (PassesPerReader(by_thread, view)) return;
  view->epochs = AssignPassesOf(every, view);
}

}  // namespace

namespace {

// A read that marks where each sample read of a file begins (TransactionMarks).
struct Mark {
  int64_t offset = -1, size = -1;
  bool Is(const ProfileTrace& t, size_t i) const {
    return t.offset[i] == offset && profile::TransferredBytes(t, i) == size;
  }
};

// Per data file, the read that begins each sample read when the file is read in pages: all its
// reads are at most kSmallReadBytes, and one small read at one offset and size (at most an
// eighth of the largest) recurs, at least 8 times and one read in 16 (SQLite's file change
// counter, 16 bytes at offset 24, read as each read transaction begins). Such a file's other
// reads are the samples' pages, however small.
std::vector<std::optional<Mark>> TransactionMarks(
    const ProfileTrace& t, const View& view, const std::unordered_map<int32_t, int32_t>& file_of,
    const std::vector<int64_t>& largest) {
  std::vector<std::map<std::pair<int64_t, int64_t>, int64_t>> counts(view.files.size());
  std::vector<int64_t> reads(view.files.size(), 0);
  for (size_t i : view.data_events) {
    if (t.kind[i] != OpKind::kRead) continue;
    const auto f = static_cast<size_t>(file_of.at(t.path[i]));
    ++reads[f];
    const int64_t size = profile::TransferredBytes(t, i);
    if (size > 0 && size * 8 <= largest[f]) ++counts[f][{t.offset[i], size}];
  }
  std::vector<std::optional<Mark>> marks(view.files.size());
  for (size_t f = 0; f < view.files.size(); ++f) {
    if (largest[f] > kSmallReadBytes || counts[f].empty()) continue;
    const auto top =
        std::max_element(counts[f].begin(), counts[f].end(),
                         [](const auto& a, const auto& b) { return a.second < b.second; });
    if (top->second >= 8 && top->second * 16 >= reads[f]) {
      marks[f] = Mark{top->first.first, top->first.second};
    }
  }
  return marks;
}

// Whether read i of `file` ends the sample read `s` is in (not for a marked file, whose marks
// alone begin sample reads): a large read that does not continue the sample's data or is one
// stored sample; a small read after the data and a pause in a file kept open.
bool EndsAccess(const ProfileTrace& t, size_t i, const View& view, const ThreadFileState& s,
                bool large, int64_t size, const std::set<int64_t>& sample_sizes,
                bool trailing_members) {
  const Access& a = view.accesses[static_cast<size_t>(s.access)];
  if (large) {
    return a.large_reads > 0 && (t.offset[i] != s.last_end || sample_sizes.count(size) > 0);
  }
  // In a file kept open, a small read after the sample's data and a pause (compute) belongs
  // to the next sample: its header, or a lookup in a table of the file (h5py's
  // coordinates). A sample read that began with an open (np.load) keeps its small reads,
  // and a read that finds the end of the file (0 bytes) ends the one it follows. The pause
  // is kMinPauseUs: a busy host's stall can move a small read that trails a sample's data
  // to the next sample read, which the next large read joins (after a file's last sample,
  // none does: a limit in docs/profiling.md).
  if (size <= 0 || a.large_reads == 0) return false;
  // A small read elsewhere once the sample read holds at least the file's smallest stored sample
  // begins the next, pause or not: zipfile's archive open in a worker, each member read from a
  // buffer fill at its local header, batch after batch. One load of a file (np.load of an npz:
  // x's data, then y's header) is split so too, and folded back into one at its close
  // (FoldSessionLoad: it re-read its end records and covered the file).
  // Not in a file of a group per sample (hdf5), nor one with a table of a row per sample: its
  // labels, or the table's row, are read elsewhere right after the sample's data, and belong to
  // it.
  const int64_t smallest = sample_sizes.empty() ? 0 : *sample_sizes.begin();
  if (!trailing_members && smallest > 0 && a.bytes >= smallest && t.offset[i] >= 0 &&
      t.offset[i] != s.last_end) {
    return true;
  }
  return !a.session && t.start_us[i] - a.end_us > kMinPauseUs;
}

// What the probe of each data file says of its samples: their stored sizes (a read of exactly
// one of them is one sample, even when it continues where the previous read ended: samples read
// in order), and whether it holds a group per sample (hdf5: dataset.hdf5_sample_groups among its
// writer keys).
struct FileSamples {
  std::set<int64_t> sizes;
  bool grouped = false;
  std::vector<DataFileInfo::RowTable> row_tables;  // a row per sample beside the samples
  DataFileInfo::FileRange extent;                  // the samples' bytes (bytes 0: not told)
  // Reads elsewhere after a sample's data belong to it: a group's other members, a table's row.
  bool Trailing() const { return grouped || !row_tables.empty(); }
};

std::vector<FileSamples> ProbedSamples(const View& view) {
  std::vector<FileSamples> out(view.files.size());
  for (size_t f = 0; f < view.files.size(); ++f) {
    const DataFileInfo& info = view.files[f].info;
    out[f].sizes.insert(info.sample_sizes.begin(), info.sample_sizes.end());
    out[f].row_tables = info.row_tables;
    out[f].extent = info.sample_extent;
    for (const auto& [key, value] : info.writer_keys) {
      out[f].grouped = out[f].grouped || key == "dataset.hdf5_sample_groups";
    }
  }
  return out;
}

// The probe's sample extents and row tables of the files whose reads they describe
// (DataFile::layout_read); the others keep every large read as a sample's.
std::vector<FileSamples> KeepReadExtents(const View& view, std::vector<FileSamples> probed) {
  for (size_t f = 0; f < probed.size(); ++f) {
    if (view.files[f].layout_read) continue;
    probed[f].extent = {};
    probed[f].row_tables.clear();
  }
  return probed;
}

// Whether read i (`size` bytes) of a file is a sample's data rather than a header or index:
// not its transaction mark when it has one, else more than kSmallReadBytes or in a file of no
// larger reads; in a group per sample, at least its smallest stored sample (the root's local
// heap, every group's name, is one large request too); never a read within a table of a row per
// sample the probe found beside the samples (fastMRI's reconstruction: the sieve buffer reads
// from the row to the table's end, up to 64 KiB, beside each sample's own read), nor one outside
// the samples' bytes when the probe told where they lie (a global heap of string attributes).
bool IsLargeRead(const ProfileTrace& t, size_t i, int64_t size, const std::optional<Mark>& mark,
                 int64_t largest, const FileSamples& probed) {
  if (mark) return !mark->Is(t, i);
  for (const DataFileInfo::RowTable& table : probed.row_tables) {
    if (table.range.Holds(t.offset[i], size)) return false;
  }
  const DataFileInfo::FileRange& e = probed.extent;
  if (e.bytes > 0 && t.offset[i] >= 0 && !e.Overlaps(t.offset[i], size)) return false;
  if (probed.grouped && !probed.sizes.empty()) return size >= *probed.sizes.begin();
  return size > kSmallReadBytes || largest <= kSmallReadBytes;
}

// The sample reads of view->data_events, in start order.
void BuildAccesses(const ProfileTrace& t, View* view) {
  view->accesses.clear();
  std::unordered_map<std::string, int32_t> index_of;
  for (size_t f = 0; f < view->files.size(); ++f) {
    index_of[view->files[f].path] = static_cast<int32_t>(f);
    view->files[f].loads.clear();
  }
  std::unordered_map<int32_t, int32_t> file_of;
  for (size_t i : view->data_events) {
    if (!file_of.count(t.path[i])) file_of[t.path[i]] = index_of.at(t.String(t.path[i]));
  }
  const std::vector<int64_t> largest = LargestReads(t, *view, file_of);
  const std::vector<std::optional<Mark>> marks = TransactionMarks(t, *view, file_of, largest);
  const std::vector<bool> layout_read = ProbedLayoutRead(t, *view);
  for (size_t f = 0; f < view->files.size(); ++f) view->files[f].layout_read = layout_read[f];
  const std::vector<FileSamples> probed = KeepReadExtents(*view, ProbedSamples(*view));
  std::map<std::pair<ThreadKey, int32_t>, ThreadFileState> states;
  std::map<ThreadKey, int32_t> last_file;
  std::vector<int64_t> first_offset;
  for (size_t i : view->data_events) {
    const int32_t file = file_of.at(t.path[i]);
    const ThreadKey thread{t.pid[i], t.tid[i]};
    ThreadFileState& s = states[{thread, file}];
    if (t.kind[i] == OpKind::kOpen || t.kind[i] == OpKind::kClose) {
      if (t.kind[i] == OpKind::kClose) {
        FoldSessionLoad(view->files[static_cast<size_t>(file)].extent, &s, &view->accesses);
        KeepLoad(s, &view->files[static_cast<size_t>(file)]);
      }
      ResetSession(&s);
      s.from_open = t.kind[i] == OpKind::kOpen;
      s.access = -1;
      s.opened = t.kind[i] == OpKind::kOpen;
      continue;
    }
    NoteSessionCall(t, i, &s);
    if (t.kind[i] != OpKind::kRead) continue;
    const int64_t size = profile::TransferredBytes(t, i);  // a read at the end of the file gets 0
    const std::optional<Mark>& mark = marks[static_cast<size_t>(file)];
    const FileSamples& samples = probed[static_cast<size_t>(file)];
    const bool large = IsLargeRead(t, i, size, mark, largest[static_cast<size_t>(file)], samples);
    auto last = last_file.find(thread);
    if (last != last_file.end() && last->second != file) s.access = -1;
    // A mark begins the next sample read once the open one holds a mark (the reads before the
    // thread's first, a connection's header and schema, join the first sample).
    const bool ends = s.access >= 0 && (mark ? !large && s.marked
                                             : EndsAccess(t, i, *view, s, large, size,
                                                          samples.sizes, samples.Trailing()));
    // In a file of a group per sample, the metadata read before a pause (an open's, a walk to
    // the first group) joins the sample whose data follows: a sample read holds its data.
    const bool holds_data = s.access < 0 || !samples.grouped ||
                            view->accesses[static_cast<size_t>(s.access)].large_reads > 0;
    if (ends && holds_data) s.access = -1;
    if (s.access < 0) s.marked = false;
    if (mark && !large) s.marked = true;
    if (s.access < 0) {
      Access a;
      a.file = file;
      a.pid = thread.first;
      a.tid = thread.second;
      a.start_us = t.start_us[i];
      a.session = s.opened;
      s.opened = false;
      s.access = static_cast<int32_t>(view->accesses.size());
      view->accesses.push_back(a);
      first_offset.push_back(t.offset[i]);
      s.session.push_back(s.access);
    }
    NoteSessionRead(t.offset[i], size, &s);
    Access& a = view->accesses[static_cast<size_t>(s.access)];
    a.end_us = std::max(a.end_us, t.start_us[i] + t.dur_us[i]);
    a.bytes += size;
    a.read_us = SaturatingAdd(a.read_us, std::max<int64_t>(t.dur_us[i], 0));
    ++a.reads;
    if (large) {
      // A marked file's sample is named by its last page (the first may be shared: a B-tree leaf).
      if (a.large_reads == 0 || mark) a.key = t.offset[i];
      ++a.large_reads;
      if (t.faults[i] >= 0 && size > 0) {
        a.faulted_bytes += size;
        a.faults += t.faults[i];
      }
    } else {
      ++a.small_reads;
    }
    if (t.offset[i] >= 0) s.last_end = t.offset[i] + size;
    last_file[thread] = file;
  }
  for (size_t k = 0; k < view->accesses.size(); ++k) {
    if (view->accesses[k].large_reads == 0) view->accesses[k].key = first_offset[k];
  }
  FoldDirectoryReads(*view, first_offset, &view->accesses);
  DropFolded(&view->accesses);
}

}  // namespace

std::vector<bool> ProbedLayoutRead(const ProfileTrace& t, const View& view) {
  std::unordered_map<std::string, size_t> index_of;
  for (size_t f = 0; f < view.files.size(); ++f) index_of[view.files[f].path] = f;
  std::vector<int64_t> large(view.files.size(), 0), held(view.files.size(), 0);
  std::vector<bool> sampled(view.files.size(), false);
  for (size_t i : view.data_events) {
    const int64_t at = t.offset[i], n = t.size_bytes[i];
    if (t.kind[i] != OpKind::kRead || at < 0 || n <= kSmallReadBytes) continue;
    const auto it = index_of.find(t.String(t.path[i]));
    if (it == index_of.end()) continue;
    const DataFileInfo& info = view.files[it->second].info;
    const bool in_samples = info.sample_extent.Overlaps(at, n);
    const bool in_table = std::any_of(info.row_tables.begin(), info.row_tables.end(),
                                      [&](const auto& r) { return r.range.Holds(at, n); });
    ++large[it->second];
    held[it->second] += in_samples || in_table;
    if (in_samples) sampled[it->second] = true;
  }
  std::vector<bool> out(view.files.size(), false);
  for (size_t f = 0; f < out.size(); ++f) out[f] = sampled[f] && held[f] * 2 >= large[f];
  return out;
}

void CollectAccesses(const ProfileTrace& t, View* view) {
  view->run_delays = RunDelays(t);
  BuildAccesses(t, view);
  if (DropNonReaders(t, view)) BuildAccesses(t, view);
  MarkProbes(&view->accesses);
  DropFolded(&view->accesses);
  // Accesses are created in event order, which is start order.
  AssignPasses(t, view);
  view->mapped = MappedReads(t, *view);
  if (view->mapped) {
    AssignMappedPasses(t, view);
  } else {
    AssignRepeatedPasses(view);
  }
  const std::vector<int64_t> epoch_starts = EpochStarts(t, view->noise);
  view->app_epoch_events = static_cast<int64_t>(epoch_starts.size());
  if (!epoch_starts.empty()) {
    view->epochs = static_cast<int32_t>(epoch_starts.size());
    view->epochs_from_events = true;
    view->reads_per_pass = 1;
    for (Access& a : view->accesses) {
      auto it = std::upper_bound(epoch_starts.begin(), epoch_starts.end(), a.start_us);
      a.epoch = static_cast<int32_t>(std::max<std::ptrdiff_t>(it - epoch_starts.begin() - 1, 0));
    }
  }
}

void AlignEpochs(const View& whole, View* part) {
  // A rank that re-reads its own samples as often as the whole run passes keeps its own passes
  // (aligned by time, a rank that lags on a busy host would lend its last reads to the next);
  // when the whole run's passes are the merged reads' (ranks that read another shard each pass),
  // a rank's own "passes" are not passes (PassesOverOneSet) and take the run's by time.
  if (part->epochs_from_events || whole.epochs <= 1 ||
      (part->epochs == whole.epochs && whole.passes_per_rank))
    return;
  std::vector<int64_t> starts(static_cast<size_t>(whole.epochs), INT64_MAX);
  for (const Access& a : whole.accesses) {
    int64_t& s = starts[static_cast<size_t>(a.epoch)];
    s = std::min(s, a.start_us);
  }
  for (Access& a : part->accesses) {
    auto it = std::upper_bound(starts.begin(), starts.end(), a.start_us);
    a.epoch = static_cast<int32_t>(std::max<std::ptrdiff_t>(it - starts.begin() - 1, 0));
  }
  part->epochs = whole.epochs;
}

}  // namespace dlio::fit
