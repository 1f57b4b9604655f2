// FitTrace stage 3, reader: the order files and samples are read in (reader.file_shuffle,
// reader.sample_shuffle), from the first two passes over the data.
#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "dlio/str_cat.h"
#include "profile/analysis/analysis_internal.h"
#include "profile/fit/fit_internal.h"

namespace dlio::fit {
namespace {

using ThreadKey = std::pair<int32_t, int32_t>;  // (pid, tid)

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

// Share of positions at which two passes read the same thing (0 when either is empty).
double SameOrder(const std::vector<int64_t>& a, const std::vector<int64_t>& b, int64_t* n) {
  const size_t m = std::min(a.size(), b.size());
  int64_t same = 0;
  for (size_t i = 0; i < m; ++i) same += a[i] == b[i];
  *n += static_cast<int64_t>(m);
  return m == 0 ? 0 : static_cast<double>(same) / static_cast<double>(m);
}

// Per pass (0 and 1): the order files are first read in, each reading thread's own such order,
// and each file's sample keys in order.
struct PassOrder {
  std::vector<int64_t> files;
  std::map<ThreadKey, std::vector<int64_t>> thread_files;
  std::map<int32_t, std::vector<int64_t>> keys;
};

std::array<PassOrder, 2> PassOrders(const View& view) {
  std::array<PassOrder, 2> passes;
  std::array<std::vector<bool>, 2> seen{std::vector<bool>(view.files.size(), false),
                                        std::vector<bool>(view.files.size(), false)};
  std::array<std::set<std::pair<ThreadKey, int32_t>>, 2> seen_by_thread;
  for (const Access& a : view.accesses) {
    if (a.epoch > 1 || !IsTrain(view, a)) continue;
    const size_t e = static_cast<size_t>(a.epoch);
    PassOrder& p = passes[e];
    p.keys[a.file].push_back(a.key);
    auto s = seen[e].begin() + a.file;
    if (!*s) {
      *s = true;
      p.files.push_back(a.file);
    }
    const ThreadKey thread{a.pid, a.tid};
    if (seen_by_thread[e].insert({thread, a.file}).second) p.thread_files[thread].push_back(a.file);
  }
  return passes;
}

// Share of the second pass's successive files of one thread (f then g, in the order it first
// reads them) where g also followed f in the first pass, in the thread that read f there; a pair
// whose f has no successor there (the last file of a thread's first pass, or a file that pass
// did not read) is not compared. Readers taking turns interleave their opens differently on every
// pass (and a busy host shuffles them more), which moves files' positions in the merged order;
// each reader's own sequence does not move unless the files are shuffled.
double SameSuccessors(const PassOrder& first, const PassOrder& second, int64_t* n) {
  std::map<int64_t, int64_t> next;
  for (const auto& [thread, files] : first.thread_files) {
    for (size_t k = 0; k + 1 < files.size(); ++k) next.emplace(files[k], files[k + 1]);
  }
  int64_t same = 0, m = 0;
  for (const auto& [thread, files] : second.thread_files) {
    for (size_t k = 0; k + 1 < files.size(); ++k) {
      auto it = next.find(files[k]);
      if (it == next.end()) continue;
      ++m;
      same += it->second == files[k + 1];
    }
  }
  *n += m;
  return m == 0 ? 0 : static_cast<double>(same) / static_cast<double>(m);
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

// Per data file, the size most of its reads have (the data's chunks or buffer fills).
std::vector<int64_t> CommonReadSizes(const ProfileTrace& t, const View& view,
                                     const std::unordered_map<int32_t, int32_t>& file_of) {
  std::vector<std::map<int64_t, int64_t>> counts(view.files.size());
  for (size_t i : view.data_events) {
    if (t.kind[i] == OpKind::kRead) {
      ++counts[static_cast<size_t>(file_of.at(t.path[i]))][profile::TransferredBytes(t, i)];
    }
  }
  std::vector<int64_t> common(view.files.size(), -1);
  for (size_t f = 0; f < counts.size(); ++f) {
    int64_t best = 0;
    for (const auto& [size, n] : counts[f]) {
      if (size > 0 && n > best) best = n, common[f] = size;
    }
  }
  return common;
}

// The pass each open of a thread belongs to: that of the thread's first sample read of the file
// that starts with or after it.
class PassOfOpen {
 public:
  explicit PassOfOpen(const View& view) {
    for (const Access& a : view.accesses) {
      starts_[{a.pid, a.tid, a.file}].push_back({a.start_us, a.epoch});
    }
  }
  int32_t operator()(int32_t pid, int32_t tid, int32_t file, int64_t start_us) const {
    auto it = starts_.find({pid, tid, file});
    if (it == starts_.end()) return -1;
    auto s = std::lower_bound(it->second.begin(), it->second.end(),
                              std::pair<int64_t, int32_t>{start_us, -1});
    return s == it->second.end() ? -1 : s->second;
  }

 private:
  std::map<std::array<int32_t, 3>, std::vector<std::pair<int64_t, int32_t>>> starts_;
};

// Per pass, for a loader that opens the file for every sample (np.load, h5py.File per sample):
// one sample per open, keyed by the lowest offset it reads in its file's most common read size.
// The headers and index nodes every open reads again are left out; whole-file loads get the
// same key for every sample (their order within a file leaves no trace).
std::array<PassOrder, 2> SessionPassOrders(const ProfileTrace& t, const View& view) {
  std::unordered_map<std::string, int32_t> index_of;
  for (size_t f = 0; f < view.files.size(); ++f) {
    index_of[view.files[f].path] = static_cast<int32_t>(f);
  }
  std::unordered_map<int32_t, int32_t> file_of;
  for (size_t i : view.data_events) {
    if (!file_of.count(t.path[i])) file_of[t.path[i]] = index_of.at(t.String(t.path[i]));
  }
  const std::vector<int64_t> common = CommonReadSizes(t, view, file_of);
  const PassOfOpen pass_of(view);
  struct Session {
    int32_t file = 0, pass = -1;
    int64_t key = -1, first = -1;
  };
  std::vector<Session> sessions;
  std::map<std::array<int32_t, 3>, size_t> open;  // (pid, tid, file) -> its session
  for (size_t i : view.data_events) {
    const int32_t file = file_of.at(t.path[i]);
    const std::array<int32_t, 3> who{t.pid[i], t.tid[i], file};
    if (t.kind[i] == OpKind::kOpen) {
      open[who] = sessions.size();
      sessions.push_back({file, pass_of(t.pid[i], t.tid[i], file, t.start_us[i]), -1, -1});
    }
    auto s = open.find(who);
    if (t.kind[i] != OpKind::kRead || s == open.end() || t.offset[i] < 0) continue;
    Session& session = sessions[s->second];
    if (session.first < 0) session.first = t.offset[i];
    if (profile::TransferredBytes(t, i) == common[static_cast<size_t>(file)] &&
        (session.key < 0 || t.offset[i] < session.key)) {
      session.key = t.offset[i];
    }
  }
  std::array<PassOrder, 2> passes;
  for (const Session& s : sessions) {
    if (s.pass < 0 || s.pass > 1 || view.files[static_cast<size_t>(s.file)].valid) continue;
    if (s.first < 0) continue;  // an open without reads
    passes[static_cast<size_t>(s.pass)].keys[s.file].push_back(s.key >= 0 ? s.key : s.first);
  }
  return passes;
}

// reader.file_shuffle from the first two passes: the merged order of first opens position by
// position, and each reader's own sequence, the one that agrees more (a shuffle agrees in
// neither); without two passes to compare, the first pass's order against the names'.
void FitFileShuffle(const std::array<PassOrder, 2>& passes, FitResult* out) {
  constexpr double kSorted = 0.7;  // rank correlation above which an order is "sorted"
  int64_t n = 0;
  const double files_rho = OrderCorrelation(passes[0].files, &n);
  int64_t compared = 0, pairs = 0;
  const double merged_same = SameOrder(passes[0].files, passes[1].files, &compared);
  const double thread_same = SameSuccessors(passes[0], passes[1], &pairs);
  const bool by_thread = thread_same > merged_same && pairs >= 3;
  const double files_same = by_thread ? thread_same : merged_same;
  if (by_thread) compared = pairs;
  if (compared >= 3 && (files_same >= 0.9 || files_same < 0.5)) {
    const bool same = files_same >= 0.9;
    Set(out, "reader.file_shuffle", same ? "off" : "seed", FitConfidence::kMedium,
        StrCat("the first two passes open files in ", same ? "the same" : "a different", " order (",
               std::llround(files_same * 100), "% of ", compared,
               by_thread ? " successive files of one reading thread agree)" : " positions agree)"));
    return;
  }
  Set(out, "reader.file_shuffle", files_rho >= kSorted ? "off" : "seed",
      n >= 8 ? FitConfidence::kMedium : FitConfidence::kLow,
      StrCat("first pass opens ", passes[0].files.size(), " files in ",
             files_rho >= kSorted ? "" : "un", "sorted name order (rank correlation ",
             Seconds(files_rho), ")"));
}

}  // namespace

void FitShuffle(const ProfileTrace& t, const View& view, FitResult* out) {
  constexpr double kSorted = 0.7;  // rank correlation above which an order is "sorted"
  const std::array<PassOrder, 2> passes = PassOrders(view);
  FitFileShuffle(passes, out);
  // A loader that opens the file for every sample: the opens, not the runs of reads, are the
  // samples, and their data (not the headers every open reads) tells which sample each is.
  const std::array<PassOrder, 2> samples =
      OpensPerSample(view) ? SessionPassOrders(t, view) : passes;
  int64_t n = 0, compared = 0;
  double rho_sum = 0, same_sum = 0;
  int64_t whole_file_loads = 0;  // files whose sample reads all read the same bytes
  for (const auto& [file, k] : samples[0].keys) {
    int64_t values = 0, m = 0;
    if (k.size() >= 2 && std::adjacent_find(k.begin(), k.end(), std::not_equal_to<>()) == k.end()) {
      ++whole_file_loads;  // one key read again and again: its order says nothing
      continue;
    }
    rho_sum += OrderCorrelation(k, &values) * static_cast<double>(values);
    n += values;
    auto next = samples[1].keys.find(file);
    if (k.size() >= 3 && next != samples[1].keys.end()) {
      same_sum += SameOrder(k, next->second, &m) * static_cast<double>(m);
      compared += m;
    }
  }
  size_t most = 0;
  for (const auto& [file, k] : samples[0].keys) most = std::max(most, k.size());
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
  if (n == 0 && whole_file_loads > 0) {
    Set(out, "reader.sample_shuffle", "off", FitConfidence::kLow,
        StrCat("files are read one after another (", switches, " file changes in ", reads,
               " reads) and every sample of a file reads the same bytes (whole-file loads): "
               "the order of samples within a file leaves no trace"));
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

}  // namespace dlio::fit
