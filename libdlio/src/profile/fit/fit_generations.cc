// FitTrace stage 2: the generations of the reading processes (DataLoader workers forked per epoch,
// PyTorch's default), and passes told by them where samples read again cannot tell them: a loader
// that reads each file whole once for every sample it holds (a chunk store without a cache: zarr's
// one file per chunk, a row per sample) re-reads every file many times within one epoch.
#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "dlio/str_cat.h"
#include "profile/fit/fit_internal.h"

namespace dlio::fit {
namespace {

// A reading process's span: its first access's start to its last's end.
struct Span {
  int32_t pid = 0;
  int64_t start_us = 0, end_us = 0;
};

std::vector<Span> ProcessSpans(const View& view) {
  std::map<int32_t, Span> by_pid;
  for (const Access& a : view.accesses) {
    auto [it, added] = by_pid.try_emplace(a.pid, Span{a.pid, a.start_us, a.end_us});
    if (added) continue;
    it->second.start_us = std::min(it->second.start_us, a.start_us);
    it->second.end_us = std::max(it->second.end_us, a.end_us);
  }
  std::vector<Span> spans;
  for (const auto& [pid, s] : by_pid) spans.push_back(s);
  std::sort(spans.begin(), spans.end(),
            [](const Span& a, const Span& b) { return a.start_us < b.start_us; });
  return spans;
}

// How often each sample (file, key) is read in each generation: counts[g][sample]; with
// `whole_files`, each file (its key taken as 0).
using SampleKey = std::pair<int32_t, int64_t>;
std::vector<std::map<SampleKey, int64_t>> ReadsPerGeneration(const View& view,
                                                             const Generations& gens,
                                                             bool whole_files = false) {
  std::vector<std::map<SampleKey, int64_t>> counts(static_cast<size_t>(gens.count));
  for (const Access& a : view.accesses) {
    ++counts[static_cast<size_t>(gens.of_pid.at(a.pid))][{a.file, whole_files ? 0 : a.key}];
  }
  return counts;
}

// Whether at least 90% of the samples (file, key) are read once in the whole run, and the files
// are read at more offsets than one: reads that begin where they like each time (random crops),
// not samples at fixed offsets.
bool KeysNeverRepeat(const View& view) {
  std::map<SampleKey, int64_t> reads;
  std::map<int32_t, std::set<int64_t>> keys_of_file;
  for (const Access& a : view.accesses) {
    ++reads[{a.file, a.key}];
    keys_of_file[a.file].insert(a.key);
  }
  int64_t once = 0;
  for (const auto& [sample, n] : reads) once += n == 1;
  size_t several = 0;
  for (const auto& [file, keys] : keys_of_file) several += keys.size() > 1;
  return once * 10 >= static_cast<int64_t>(reads.size()) * 9 &&
         several * 10 >= keys_of_file.size() * 9;
}

// The number r of reads every sample has in every generation, when at least 90% of the
// (generation, sample) pairs have it and every generation reads at least 90% of the samples; 0
// otherwise.
int64_t UniformReads(const std::vector<std::map<SampleKey, int64_t>>& counts) {
  std::map<SampleKey, bool> all;
  std::map<int64_t, int64_t> pairs_with;  // reads -> (generation, sample) pairs
  int64_t pairs = 0;
  for (const auto& generation : counts) {
    for (const auto& [sample, n] : generation) {
      all[sample] = true;
      ++pairs_with[n];
      ++pairs;
    }
  }
  for (const auto& generation : counts) {
    if (generation.size() * 10 < all.size() * 9) return 0;
  }
  const auto most =
      std::max_element(pairs_with.begin(), pairs_with.end(),
                       [](const auto& a, const auto& b) { return a.second < b.second; });
  return most != pairs_with.end() && most->second * 10 >= pairs * 9 ? most->first : 0;
}

}  // namespace

Generations FindGenerations(const View& view) {
  const std::vector<Span> spans = ProcessSpans(view);
  Generations g;
  if (spans.size() < 2) return g;
  std::vector<int64_t> sizes{0};
  int64_t end_us = spans.front().end_us;
  for (const Span& s : spans) {
    if (s.start_us > end_us) sizes.push_back(0);
    end_us = sizes.back() == 0 ? s.end_us : std::max(end_us, s.end_us);
    g.of_pid[s.pid] = static_cast<int32_t>(sizes.size() - 1);
    ++sizes.back();
  }
  const bool even =
      std::all_of(sizes.begin(), sizes.end(), [&](int64_t n) { return n == sizes.front(); });
  if (sizes.size() < 2 || !even) return {};
  g.count = static_cast<int32_t>(sizes.size());
  g.processes = sizes.front();
  return g;
}

void AssignRepeatedPasses(View* view) {
  const Generations gens = FindGenerations(*view);
  if (gens.count < 2) return;
  // Reads that begin at a new offset each time, of files each read as often in every generation:
  // crops of whole-file samples (the wave module's setpos and readframes), a file a sample.
  const int64_t whole_file_reads =
      KeysNeverRepeat(*view) ? UniformReads(ReadsPerGeneration(*view, gens, /*whole_files=*/true))
                             : 0;
  const bool crops = whole_file_reads >= 1;
  if (!crops && gens.count == view->epochs) return;
  const int64_t reads = crops
                            ? whole_file_reads
                            : UniformReads(ReadsPerGeneration(*view, gens, /*whole_files=*/false));
  if (reads < 1 || (reads == 1 && !crops)) return;
  for (Access& a : view->accesses) {
    a.epoch = gens.of_pid.at(a.pid);
    if (crops) a.key = 0;
  }
  view->epochs = gens.count;
  const std::string what =
      StrCat(gens.count, " generations of ", gens.processes,
             " reading processes, each after the last ended (DataLoader workers forked per epoch)");
  if (crops) {
    view->cropped_passes =
        StrCat(what, ", each reading every file ", reads == 1 ? "once" : StrCat(reads, " times"),
               " from an offset no other read began at (random crops of one sample per file)");
  }
  if (reads < 2) return;
  view->reads_per_pass = reads;
  view->repeated_passes =
      StrCat(what, ", and in each every ", crops ? "file" : "sample", " is read ", reads,
             crops ? " times (random crops of it)"
                   : " times (a file read whole for each of the samples it holds, as a chunk "
                     "store without a cache reads)",
             ": ", gens.count, " passes of ", reads, " reads of each, emulated as ",
             SaturatingMul(gens.count, reads), " epochs of one");
}

}  // namespace dlio::fit
