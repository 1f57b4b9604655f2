// FitTrace stage 2 for data read through mappings (np.load(mmap_mode='r'), np.memmap): the rows
// come in as page faults, which leave no read in a trace. What is left of each process's reading
// is its mapping: the opens and header reads before it, the mmap, and the pages it had mapped in
// (mmap.touched runs, which with the kernel's read-around and large folios may cover far more
// than the rows it read). Passes are then told by the processes, not by samples read again.
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "dlio/storage.h"
#include "dlio/str_cat.h"
#include "profile/fit/fit_internal.h"

namespace dlio::fit {

bool MappedReads(const ProfileTrace& t, const View& view) {
  int64_t touched = 0, read = 0;
  for (size_t i : view.data_events) {
    if (t.kind[i] != OpKind::kRead || t.size_bytes[i] <= 0) continue;
    read += t.size_bytes[i];
    if (t.String(t.name[i]) == kMmapTouchedName) touched += t.size_bytes[i];
  }
  return touched > 0 && touched * 2 >= read;
}

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

// Generations of the reading processes: a process that starts after every process of the current
// generation ended begins the next one (DataLoader workers forked per epoch: an iterator's workers
// exit before the next epoch's start). Sets the accesses' epochs and returns the reason when there
// are at least two generations, all of one size; "" (nothing changed) otherwise.
std::string PassesByGeneration(View* view) {
  const std::vector<Span> spans = ProcessSpans(*view);
  if (spans.size() < 2) return "";
  std::map<int32_t, int32_t> generation_of;
  std::vector<int64_t> per_generation{0};
  int64_t end_us = spans.front().end_us;
  for (const Span& s : spans) {
    if (s.start_us > end_us) per_generation.push_back(0);
    end_us = per_generation.back() == 0 ? s.end_us : std::max(end_us, s.end_us);
    generation_of[s.pid] = static_cast<int32_t>(per_generation.size() - 1);
    ++per_generation.back();
  }
  const bool even = std::all_of(per_generation.begin(), per_generation.end(),
                                [&](int64_t n) { return n == per_generation.front(); });
  if (per_generation.size() < 2 || !even) return "";
  for (Access& a : view->accesses) a.epoch = generation_of[a.pid];
  view->epochs = static_cast<int32_t>(per_generation.size());
  return StrCat(view->epochs, " generations of ", per_generation.front(),
                " processes map the data, each after the last ended (DataLoader workers forked "
                "per epoch)");
}

// Passes as the mappings of one data file in one process (a loop that maps its files anew each
// epoch), at most: an access belongs to the pass of the mappings of its file begun before it.
std::string PassesByMappings(const ProfileTrace& t, View* view) {
  std::map<std::pair<int32_t, int32_t>, std::vector<int64_t>> maps;  // (pid, path id) -> starts
  for (size_t i : view->data_events) {
    if (t.kind[i] == OpKind::kMmap && t.String(t.name[i]) != kMunmapCallName) {
      maps[{t.pid[i], t.path[i]}].push_back(t.start_us[i]);
    }
  }
  size_t most = 1;
  for (const auto& [key, starts] : maps) most = std::max(most, starts.size());
  std::map<std::string, int32_t> path_ids;
  for (const auto& [key, starts] : maps) path_ids[t.String(key.second)] = key.second;
  for (Access& a : view->accesses) {
    const auto id = path_ids.find(view->files[static_cast<size_t>(a.file)].path);
    const auto it = id == path_ids.end() ? maps.end() : maps.find({a.pid, id->second});
    const int64_t before =
        it == maps.end() ? 0
                         : std::lower_bound(it->second.begin(), it->second.end(), a.start_us) -
                               it->second.begin();
    a.epoch = static_cast<int32_t>(std::clamp<int64_t>(before, 0, static_cast<int64_t>(most) - 1));
  }
  view->epochs = static_cast<int32_t>(most);
  return StrCat(most, " mapping", most == 1 ? "" : "s",
                " of a data file in one process at most (a pass per mapping)");
}

}  // namespace

void AssignMappedPasses(const ProfileTrace& t, View* view) {
  std::string why = PassesByGeneration(view);
  if (why.empty()) why = PassesByMappings(t, view);
  view->mapped_passes =
      StrCat(why,
             "; rows read from a mapping come in as page faults, which leave no reads to "
             "count passes by");
}

}  // namespace dlio::fit
