// checkpoint.folder_name from the traced checkpoint folders' names (fit_internal.h).
#include <algorithm>
#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "checkpoint/folder_name.h"
#include "dlio/str_cat.h"
#include "profile/fit/fit_internal.h"

namespace dlio::fit {
namespace {

std::string ParentOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

// A folder name cut at its runs of digits: texts[0] numbers[0] texts[1] ... texts[n].
struct CutName {
  std::vector<std::string> texts;
  std::vector<std::string> numbers;
};

CutName CutAtDigits(const std::string& name) {
  CutName cut;
  cut.texts.emplace_back();
  for (size_t i = 0; i < name.size();) {
    if (name[i] < '0' || name[i] > '9') {
      cut.texts.back() += name[i++];
      continue;
    }
    size_t end = i;
    while (end < name.size() && name[end] >= '0' && name[end] <= '9') ++end;
    cut.numbers.push_back(name.substr(i, end - i));
    cut.texts.emplace_back();
    i = end;
  }
  return cut;
}

// The one folder each save writes into besides the tag file, in save order; empty unless every
// save has one, all in one parent folder, and they are distinct (or, for a single save, a sibling
// of the tag file or of the resumed checkpoint's folder says it is a checkpoint's own).
std::vector<std::string> SaveFolders(const CheckpointWrites& w, const std::string& tag_path,
                                     const std::vector<std::string>& resumed) {
  std::vector<std::string> folders;
  for (const Save& s : w.saves) {
    std::set<std::string> dirs;
    for (const std::string& f : s.files) {
      if (f != tag_path) dirs.insert(ParentOf(f));
    }
    if (dirs.size() != 1) return {};
    folders.push_back(*dirs.begin());
  }
  if (folders.empty()) return {};
  const std::string root = ParentOf(folders.front());
  for (const std::string& f : folders) {
    if (root.empty() || ParentOf(f) != root) return {};
  }
  const std::set<std::string> distinct(folders.begin(), folders.end());
  if (distinct.size() != folders.size()) return {};
  if (folders.size() == 1 && ParentOf(tag_path) != root &&
      std::find(resumed.begin(), resumed.end(), folders.front()) == resumed.end() &&
      (resumed.empty() || ParentOf(resumed.front()) != root)) {
    return {};
  }
  return folders;
}

// The index of the only number that varies among `cuts` (all cut alike), the last one when none
// varies; -1 when they are not cut alike, hold no number, or several numbers vary.
int VaryingNumber(const std::vector<CutName>& cuts) {
  const CutName& first = cuts.front();
  if (first.numbers.empty()) return -1;
  for (const CutName& c : cuts) {
    if (c.texts != first.texts) return -1;
  }
  int varying = -1;
  for (size_t k = 0; k < first.numbers.size(); ++k) {
    const bool same = std::all_of(cuts.begin(), cuts.end(), [&](const CutName& c) {
      return c.numbers[k] == first.numbers[k];
    });
    if (same) continue;
    if (varying >= 0) return -1;
    varying = static_cast<int>(k);
  }
  return varying >= 0 ? varying : static_cast<int>(first.numbers.size()) - 1;
}

// "global_step{step}": `cut` with number `at` a placeholder of `field`, zero-padded to `width`.
std::string TemplateOf(const CutName& cut, int at, const char* field, size_t width) {
  std::string out = cut.texts[0];
  for (size_t k = 0; k < cut.numbers.size(); ++k) {
    out += static_cast<int>(k) == at
               ? StrCat("{", field, width > 0 ? StrCat(":0", width) : std::string(), "}")
               : cut.numbers[k];
    out += cut.texts[k + 1];
  }
  return out;
}

std::string Listed(const std::vector<std::string>& names) {
  std::string out;
  for (size_t k = 0; k < names.size() && k < 3; ++k) out += (k ? ", " : "") + names[k];
  return names.size() > 3 ? out + ", ..." : out;
}

// What one number of the saves' file names counts: "" (it does not vary), "id" (1 a save),
// "step" (the saves' traced steps plus one offset, or multiples of one period: a save every
// `period` steps), "epoch" (the pass each save happened in, where that is not the save count:
// several saves a pass, or a pass without one); nullptr when it is none. `why` says which.
const char* FieldOfNumbers(const std::vector<int64_t>& values, const std::vector<Save>& saves,
                           std::string* why) {
  bool same = true, by_id = true, by_period = values.size() > 1, by_trace = true, by_epoch = true;
  const int64_t period = values.size() > 1 ? values[1] - values[0] : 0;
  const int64_t offset = values[0] - saves[0].step;
  for (size_t k = 0; k < values.size(); ++k) {
    same = same && values[k] == values[0];
    by_trace = by_trace && offset >= 0 && values[k] - saves[k].step == offset;
    by_epoch = by_epoch && k < saves.size() && saves[k].epoch >= 0 && values[k] == saves[k].epoch;
    if (k == 0) continue;
    by_id = by_id && values[k] == values[k - 1] + 1;
    by_period = by_period && values[k] - values[k - 1] == period;
  }
  by_period = by_period && period > 1 && values[0] % period == 0;
  if (same) return "";
  if (by_trace) {
    *why = StrCat("{step} the global step the save follows (the traced steps",
                  offset > 0 ? StrCat(" plus ", offset) : std::string(), ")");
    return "step";
  }
  if (by_id) {
    *why = "{id} counts the checkpoints";
    return "id";
  }
  if (by_epoch) {
    *why = "{epoch} the pass over the data each save happened in, from 0";
    return "epoch";
  }
  if (by_period) {
    *why = StrCat("{step} the global step (a save every ", period, " steps)");
    return "step";
  }
  return nullptr;
}

}  // namespace

std::optional<SaveFileName> FitSaveFileName(const CheckpointWrites& w, const std::string& example) {
  const CutName first = CutAtDigits(example);
  if (first.numbers.empty() || w.saves.size() < 2) return std::nullopt;
  std::vector<std::string> names;  // the save's file cut as `example`, one a save
  for (const Save& s : w.saves) {
    std::vector<std::string> alike;
    for (const std::string& f : s.files) {
      if (CutAtDigits(Basename(f)).texts == first.texts) alike.push_back(Basename(f));
    }
    if (alike.size() != 1) return std::nullopt;
    names.push_back(alike.front());
  }
  std::vector<CutName> cuts;
  for (const std::string& n : names) cuts.push_back(CutAtDigits(n));
  std::string text = first.texts[0], why;
  bool varies = false;
  for (size_t k = 0; k < first.numbers.size(); ++k) {
    std::vector<int64_t> values;
    bool padded = false, same_length = true;
    for (const CutName& c : cuts) {
      int64_t v = 0;
      if (c.numbers[k].size() > 18 || !ParseDigits(c.numbers[k], &v)) return std::nullopt;
      values.push_back(v);
      padded = padded || (c.numbers[k].size() > 1 && c.numbers[k][0] == '0');
      same_length = same_length && c.numbers[k].size() == cuts[0].numbers[k].size();
    }
    std::string field_why;
    const char* field = FieldOfNumbers(values, w.saves, &field_why);
    if (field == nullptr) return std::nullopt;
    if (*field == '\0') {
      text += cuts[0].numbers[k];
    } else {
      varies = true;
      const size_t width = padded && same_length ? cuts[0].numbers[k].size() : 0;
      text += StrCat("{", field, width > 0 ? StrCat(":0", width) : std::string(), "}");
      why += StrCat(why.empty() ? "" : ", ", field_why);
    }
    text += first.texts[k + 1];
  }
  if (!varies) return std::nullopt;
  if (!checkpoint_internal::FolderNameTemplate::ParseFileName(text, "checkpoint.torch_file_name")
           .ok()) {
    return std::nullopt;  // a field twice, or a digit after one
  }
  return SaveFileName{text, StrCat("each save's file is named anew (", Listed(names), "): ", why)};
}

namespace {

// The one folder all saves write their files into (the tag file aside), "" when they write into
// several.
std::string SharedFolder(const CheckpointWrites& w, const std::string& tag_path) {
  std::set<std::string> dirs;
  for (const Save& s : w.saves) {
    for (const std::string& f : s.files) {
      if (f != tag_path) dirs.insert(ParentOf(f));
    }
  }
  return dirs.size() == 1 ? *dirs.begin() : std::string();
}

// folder_name "." for h5py_save when every save rewrites one file (Keras' save_weights('w.h5')
// each epoch).
bool FitOneFile(const CheckpointWrites& w, const std::string& tag_path, FitResult* out) {
  if (out->Find("checkpoint.h5py_file_name") == nullptr || w.saves.size() < 2) return false;
  std::set<std::string> files;
  for (const Save& s : w.saves) {
    for (const std::string& f : s.files) {
      if (f != tag_path) files.insert(f);
    }
  }
  if (files.size() != 1) return false;
  Set(out, "checkpoint.folder_name", checkpoint_internal::kFlatFolderName, FitConfidence::kHigh,
      StrCat("all ", w.saves.size(), " saves rewrite one file (", Basename(*files.begin()),
             ") in place: no folder per save"));
  return true;
}

// folder_name "." when the saves' files lie side by side in one folder under per-save names.
bool FitFlatFolder(const CheckpointWrites& w, const std::string& tag_path, FitResult* out) {
  if (FitOneFile(w, tag_path, out)) return true;
  const std::string shared = SharedFolder(w, tag_path);
  const FitEntry* names = out->Find("checkpoint.torch_file_name");
  if (w.saves.size() < 2 || shared.empty() || names == nullptr ||
      names->value.find('{') == std::string::npos) {
    return false;
  }
  Set(out, "checkpoint.folder_name", checkpoint_internal::kFlatFolderName, FitConfidence::kMedium,
      StrCat("every save writes its files side by side in one folder (", Basename(shared),
             "/), each under a name of its own (checkpoint.torch_file_name): no folder per save"));
  return true;
}

}  // namespace

void FitFolderName(const CheckpointWrites& w, const std::string& tag_path,
                   const std::vector<const FileUse*>& resumed, FitResult* out) {
  if (FitFlatFolder(w, tag_path, out)) return;
  std::vector<std::string> resumed_dirs;
  for (const FileUse* u : resumed) resumed_dirs.push_back(ParentOf(u->path));
  const std::vector<std::string> folders = SaveFolders(w, tag_path, resumed_dirs);
  if (folders.empty()) return;  // no folder of its own per save
  const std::string root = ParentOf(folders.front());
  std::vector<std::string> names;
  for (const std::string& f : folders) names.push_back(Basename(f));
  std::string resumed_name;  // the resumed checkpoint's folder, beside the saves'
  for (const std::string& d : resumed_dirs) {
    if (ParentOf(d) == root && resumed_name.empty()) resumed_name = Basename(d);
  }
  std::vector<CutName> cuts;
  for (const std::string& n : names) cuts.push_back(CutAtDigits(n));
  if (!resumed_name.empty()) cuts.push_back(CutAtDigits(resumed_name));
  const int at = VaryingNumber(cuts);
  const std::string kept = StrCat("dlio names them ", checkpoint_internal::kDefaultFolderName);
  if (at < 0) {
    Unset(out, "checkpoint.folder_name", checkpoint_internal::kDefaultFolderName,
          StrCat("each save writes a folder of its own (", Listed(names),
                 "), but not one number of their names varies; ", kept));
    return;
  }
  std::vector<int64_t> numbers, offsets;
  size_t width = 0;
  bool padded = false, same_length = true;
  for (size_t k = 0; k < cuts.size(); ++k) {
    const std::string& text = cuts[k].numbers[static_cast<size_t>(at)];
    int64_t value = 0;
    if (text.size() > 18 || !ParseDigits(text, &value)) return;
    numbers.push_back(value);
    if (k < w.saves.size()) offsets.push_back(value - w.saves[k].step);
    padded = padded || (text.size() > 1 && text[0] == '0');
    same_length = same_length && text.size() == cuts[0].numbers[static_cast<size_t>(at)].size();
  }
  if (padded && same_length) width = cuts[0].numbers[static_cast<size_t>(at)].size();
  const bool by_step =
      offsets.front() >= 0 &&
      std::all_of(offsets.begin(), offsets.end(), [&](int64_t o) { return o == offsets.front(); });
  bool by_id = !by_step;
  for (size_t k = 1; k < w.saves.size(); ++k) by_id = by_id && numbers[k] == numbers[k - 1] + 1;
  if (!resumed_name.empty()) by_id = by_id && numbers.back() + 1 == numbers.front();
  // Without the steps (a checkpoint-only trace, or pauses a busy host hid): multiples of one
  // period, a save every `period` steps.
  // Or the pass each save happened in (several saves a pass).
  std::string period_why;
  bool by_period = false, by_epoch = false;
  if (!by_step && !by_id && resumed_name.empty()) {
    const std::vector<int64_t> saved(numbers.begin(),
                                     numbers.begin() + static_cast<std::ptrdiff_t>(w.saves.size()));
    const char* field = FieldOfNumbers(saved, w.saves, &period_why);
    by_period = field != nullptr && std::string_view(field) == "step";
    by_epoch = field != nullptr && std::string_view(field) == "epoch";
  }
  const std::string value =
      TemplateOf(cuts[0], at, by_step || by_period ? "step" : (by_epoch ? "epoch" : "id"), width);
  auto parsed = checkpoint_internal::FolderNameTemplate::Parse(value);
  if ((!by_step && !by_id && !by_period && !by_epoch) || !parsed.ok()) {
    Unset(out, "checkpoint.folder_name", checkpoint_internal::kDefaultFolderName,
          StrCat("the saves' folders (", Listed(names),
                 ") hold a number that is neither the step of each save plus one offset, a "
                 "count of the checkpoints nor the pass each save happened in; ",
                 kept));
    return;
  }
  std::string steps;
  for (size_t k = 0; k < w.saves.size(); ++k) steps += StrCat(k ? ", " : "", w.saves[k].step);
  const std::string resumed_from =
      resumed_name.empty() ? std::string() : StrCat(", resumed from ", resumed_name);
  const std::string why =
      by_step     ? StrCat("the saves' folders (", Listed(names),
                           ") are named by their global step: ", "the traced step (", steps, ")",
                       offsets.front() > 0 ? StrCat(" plus ", offsets.front()) : std::string(),
                           resumed_from,
                       offsets.front() > 0 && !resumed_name.empty()
                               ? " (a resumed run's step count goes on from its step)"
                               : "")
      : by_period ? StrCat("the saves' folders (", Listed(names), ") are named by their ",
                           period_why.substr(period_why.find("global step")))
      : by_epoch
          ? StrCat("the saves' folders (", Listed(names), ") are named by ", period_why)
          : StrCat("the saves' folders (", Listed(names), ") count the checkpoints one by one",
                   resumed_from, " (dlio's ids: one past the highest already there)");
  Set(out, "checkpoint.folder_name", value,
      w.saves.size() > 1 ? FitConfidence::kMedium : FitConfidence::kLow,
      StrCat(why, width > 0 ? StrCat(", zero-padded to ", width, " digits") : std::string()));
}

}  // namespace dlio::fit
