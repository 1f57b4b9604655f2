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

// Generations of the reading processes (FindGenerations): a pass per generation when there are
// at least two, all of one size; "" (nothing changed) otherwise.
std::string PassesByGeneration(View* view) {
  const Generations gens = FindGenerations(*view);
  if (gens.count < 2) return "";
  for (Access& a : view->accesses) a.epoch = gens.of_pid.at(a.pid);
  view->epochs = gens.count;
  return StrCat(view->epochs, " generations of ", gens.processes,
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
  view->remapped_per_pass = most > 1;
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
