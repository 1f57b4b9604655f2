// Reader keys told by matching loads: the probe loads a file once under each value of a reader key
// its format offers (DataFileInfo::read_variants: npz's reader.npz_members, the members each
// np.load reads) and keeps that load's calls (reads by offset, and lseeks); the trace's loads of
// the same file (DataFile::loads, a thread's calls from an open to its close) are compared with
// them, call for call. The value most loads match is set, unless it is the key's default (an empty
// value). Also the root's attributes of hdf5 files (DataFileInfo::root_attributes), and whether
// the loads read them (one of DataFileInfo::attribute_reads among a load's reads).
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "dlio/str_cat.h"
#include "profile/fit/fit_internal.h"

namespace dlio::fit {
namespace {

// Per key: the loads each value matched, the loads compared, and the files they came from.
struct Votes {
  std::map<std::string, int64_t> matched;
  int64_t loads = 0;
  int64_t files = 0;
};

// The value of `key` among `f`'s variants whose calls are `load`'s (nullptr when none is).
const std::string* MatchingValue(const DataFile& f, const std::string& key,
                                 const std::vector<int64_t>& load) {
  for (const DataFileInfo::ReadVariant& v : f.info.read_variants) {
    if (v.key == key && v.calls == load) return &v.value;
  }
  return nullptr;
}

std::map<std::string, Votes> CountVotes(const View& view) {
  std::map<std::string, Votes> votes;
  for (const DataFile& f : view.files) {
    if (!f.probed || f.loads.empty()) continue;
    std::set<std::string> keys;
    for (const DataFileInfo::ReadVariant& v : f.info.read_variants) keys.insert(v.key);
    for (const std::string& key : keys) {
      Votes& k = votes[key];
      ++k.files;
      for (const std::vector<int64_t>& load : f.loads) {
        ++k.loads;
        const std::string* value = MatchingValue(f, key, load);
        if (value != nullptr) ++k.matched[*value];
      }
    }
  }
  return votes;
}

}  // namespace

void FitReadVariants(const View& view, FitResult* out) {
  for (const auto& [key, k] : CountVotes(view)) {
    const std::pair<const std::string, int64_t>* best = nullptr;
    for (const auto& entry : k.matched) {
      if (best == nullptr || entry.second > best->second) best = &entry;
    }
    // Most loads must match it: a program whose loads match none of the values (another
    // library, a file kept open across samples) keeps the default.
    if (best == nullptr || best->first.empty() || best->second * 2 <= k.loads) continue;
    Set(out, key, best->first, FitConfidence::kHigh,
        StrCat(best->second, " of the ", k.loads, " traced loads of ", k.files,
               " probed files make the reads and lseeks of a load under this value, call for "
               "call (the probe loaded each file under each value)"));
  }
}

namespace {

// Whether `load` reads at one of `reads`' offsets.
bool ReadsAny(const std::vector<int64_t>& load, const std::vector<DataFileInfo::FileRange>& reads) {
  return std::any_of(load.begin(), load.end(), [&](int64_t at) {
    return std::any_of(reads.begin(), reads.end(),
                       [at](const DataFileInfo::FileRange& r) { return r.offset == at; });
  });
}

}  // namespace

void FitRootAttributes(const View& view, FitResult* out) {
  std::map<std::string, int64_t> items;  // value -> probed files
  int64_t files = 0, loads = 0, reading = 0;
  for (const DataFile& f : view.files) {
    if (!f.probed || f.info.root_attributes.empty()) continue;
    ++files;
    ++items[f.info.root_attributes];
    if (f.info.attribute_reads.empty()) continue;
    for (const std::vector<int64_t>& load : f.loads) {
      ++loads;
      reading += ReadsAny(load, f.info.attribute_reads);
    }
  }
  if (files == 0) return;
  const auto common = std::max_element(
      items.begin(), items.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  Set(out, "dataset.hdf5_root_attributes", common->first,
      common->second == files ? FitConfidence::kHigh : FitConfidence::kMedium,
      StrCat(common->second, " of the ", files,
             " probed files with attributes on their root have these (names, shapes, types and "
             "the longest string's characters): libhdf5 reads the root's header, grown by them, "
             "at every open"));
  // Most loads must read them: a program that reads the attributes once, or never, keeps the
  // default.
  if (loads == 0 || reading * 2 <= loads) return;
  Set(out, "reader.h5py_read_attributes", "true", FitConfidence::kHigh,
      StrCat(reading, " of the ", loads,
             " traced loads (an open to its close) of the probed files make a read the probe made "
             "reading the root's attributes after an open (the global heap of their strings): "
             "dict(f.attrs) per sample"));
}

}  // namespace dlio::fit
