// FitTrace stage 1: which files the trace names, which of them are the dataset (the suffix whose
// files were read the most bytes), their index companions, and what a probe of each tells.
#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <unordered_map>

#include "profile/analysis/analysis_internal.h"
#include "profile/fit/fit_internal.h"

namespace dlio::fit {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

bool IsDlioInternal(std::string_view path) {
  return path.rfind(".dlio", 0) == 0 || path.find("/.dlio") != std::string_view::npos;
}

namespace {

// The data file an index file belongs to: "<f>.idx", "<f>.off.idx", "<f>.sz.idx" -> "<f>".
std::string IndexedFile(std::string_view path) {
  for (std::string_view suffix : {".off.idx", ".sz.idx", ".idx"}) {
    if (path.size() > suffix.size() && path.substr(path.size() - suffix.size()) == suffix) {
      return std::string(path.substr(0, path.size() - suffix.size()));
    }
  }
  return "";
}

bool InValidFolder(std::string_view path) {
  size_t start = 0;
  while (start < path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) break;  // the last component is the file name
    const std::string_view part = path.substr(start, end - start);
    if (part == "valid" || part == "eval" || part == "val" || part == "validation") return true;
    start = end + 1;
  }
  return false;
}

// Per path id: what was done to the file.
std::unordered_map<int32_t, FileUse> Uses(const ProfileTrace& t, const View& view) {
  std::unordered_map<int32_t, FileUse> uses;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t.path[i] == ProfileTrace::kNoString || t.kind[i] == OpKind::kOther) continue;
    if (view.noise.paths.count(t.path[i])) continue;
    if (view.skip_mpiio && t.String(t.category[i]) == kDxtMpiioCategory) continue;
    auto [it, fresh] = uses.try_emplace(t.path[i]);
    FileUse& u = it->second;
    if (fresh) {
      u.path = t.String(t.path[i]);
      u.first_us = t.start_us[i];
    }
    u.first_us = std::min(u.first_us, t.start_us[i]);
    const int64_t size = profile::TransferredBytes(t, i);  // what a read got, not what it asked for
    switch (t.kind[i]) {
      case OpKind::kRead:
      case OpKind::kWrite: {
        const bool read = t.kind[i] == OpKind::kRead;
        (read ? u.reads : u.writes) += 1;
        (read ? u.bytes_read : u.bytes_written) += size;
        if (t.offset[i] >= 0) u.max_end = std::max(u.max_end, t.offset[i] + size);
        break;
      }
      case OpKind::kOpen:
        ++u.opens;
        break;
      case OpKind::kMmap:
        ++u.mmaps;
        break;
      case OpKind::kSync:
        ++u.syncs;
        break;
      default:
        break;
    }
  }
  return uses;
}

// The suffix whose read files were read the most bytes (ties: more files), besides the suffix of
// checkpoints the run resumes from (when another suffix is read).
std::string DataExtension(const std::vector<FileUse>& uses,
                          const std::vector<std::string>& companions) {
  const std::set<std::string> resumed = ResumedExtensions(uses);
  bool others = false;
  for (const FileUse& u : uses) {
    others = others || (u.reads > 0 && !resumed.count(Extension(u.path)));
  }
  std::map<std::string, std::pair<int64_t, int64_t>> by_ext;  // bytes, files
  for (const FileUse& u : uses) {
    if ((u.reads == 0 && u.mmaps == 0) || IsDlioInternal(u.path)) continue;
    if (others && resumed.count(Extension(u.path))) continue;
    if (std::find(companions.begin(), companions.end(), u.path) != companions.end()) continue;
    auto& [bytes, files] = by_ext[Extension(u.path)];
    bytes += u.bytes_read;
    ++files;
  }
  std::string best;
  std::pair<int64_t, int64_t> best_score{-1, -1};
  for (const auto& [ext, score] : by_ext) {
    if (score > best_score) {
      best_score = score;
      best = ext;
    }
  }
  return best;
}

void ProbeFiles(const FitOptions& options, View* view) {
  size_t probed = 0;
  for (DataFile& f : view->files) {
    if (!options.probe || probed >= options.max_probed_files) break;
    ++probed;
    auto info = options.probe(f.path);
    if (!info.ok()) continue;
    f.info = std::move(info).value();
    f.probed = true;
    if (f.info.size >= 0) f.extent = f.info.size;
  }
}

}  // namespace

std::set<std::string> ResumedExtensions(const std::vector<FileUse>& uses) {
  std::map<std::string, std::pair<int64_t, int64_t>> n;  // files only written, only read
  for (const FileUse& u : uses) {
    if (IsDlioInternal(u.path) || Extension(u.path).empty()) continue;
    if (u.writes > 0 && u.reads == 0) ++n[Extension(u.path)].first;
    if (u.reads > 0 && u.writes == 0) ++n[Extension(u.path)].second;
  }
  std::set<std::string> out;
  for (const auto& [ext, count] : n) {
    if (count.first > 0 && count.second > 0 && count.second <= count.first) out.insert(ext);
  }
  return out;
}

bool NaturalLess(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (IsDigit(a[i]) && IsDigit(b[j])) {
      size_t ie = i, je = j;
      while (ie < a.size() && IsDigit(a[ie])) ++ie;
      while (je < b.size() && IsDigit(b[je])) ++je;
      std::string_view na = a.substr(i, ie - i), nb = b.substr(j, je - j);
      while (na.size() > 1 && na.front() == '0') na.remove_prefix(1);
      while (nb.size() > 1 && nb.front() == '0') nb.remove_prefix(1);
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = ie;
      j = je;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i;
    ++j;
  }
  return a.size() - i < b.size() - j;
}

std::string Basename(std::string_view path) {
  const size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

std::string Extension(std::string_view path) {
  const std::string base = Basename(path);
  const size_t dot = base.rfind('.');
  if (dot == std::string::npos || dot == 0) return "";
  std::string ext = base.substr(dot + 1);
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

Status CollectFiles(const ProfileTrace& t, const FitOptions& options, View* view) {
  bool posix = false, mpiio = false;
  for (int32_t c : t.category) {
    if (c == ProfileTrace::kNoString) continue;
    posix = posix || t.String(c) == kDxtPosixCategory;
    mpiio = mpiio || t.String(c) == kDxtMpiioCategory;
  }
  view->skip_mpiio = posix && mpiio;
  FindNoise(t, options, &view->noise);
  for (auto& [id, use] : Uses(t, *view)) view->uses.push_back(std::move(use));
  std::sort(view->uses.begin(), view->uses.end(),
            [](const FileUse& a, const FileUse& b) { return NaturalLess(a.path, b.path); });

  std::unordered_map<std::string, const FileUse*> by_path;
  for (const FileUse& u : view->uses) by_path[u.path] = &u;
  for (const FileUse& u : view->uses) {
    const std::string indexed = IndexedFile(u.path);
    if (u.reads > 0 && !indexed.empty() && by_path.count(indexed)) {
      view->companions.push_back(u.path);
    }
  }
  view->extension = DataExtension(view->uses, view->companions);
  for (const FileUse& u : view->uses) {
    if ((u.reads == 0 && u.mmaps == 0) || IsDlioInternal(u.path) ||
        Extension(u.path) != view->extension) {
      continue;
    }
    if (std::find(view->companions.begin(), view->companions.end(), u.path) !=
        view->companions.end()) {
      continue;
    }
    DataFile f;
    f.path = u.path;
    f.valid = InValidFolder(u.path);
    f.extent = u.max_end;
    f.opens = u.opens;
    f.reads = u.reads;
    f.bytes_read = u.bytes_read;
    view->files.push_back(std::move(f));
  }
  ProbeFiles(options, view);

  std::unordered_map<std::string, int32_t> index_of;
  for (size_t f = 0; f < view->files.size(); ++f) {
    index_of[view->files[f].path] = static_cast<int32_t>(f);
  }
  std::unordered_map<int32_t, int32_t> file_of;  // path id -> index in view->files, -1 none
  for (int32_t id : t.path) {
    if (id == ProfileTrace::kNoString || file_of.count(id)) continue;
    auto it = index_of.find(t.String(id));
    file_of[id] = it == index_of.end() ? -1 : it->second;
  }
  for (size_t i = 0; i < t.size(); ++i) {
    auto it = file_of.find(t.path[i]);
    if (it == file_of.end() || it->second < 0) continue;
    if (view->skip_mpiio && t.String(t.category[i]) == kDxtMpiioCategory) continue;
    if (t.kind[i] == OpKind::kOther) {
      // An unknown call (numpy.fromfile's fseeko64 before fit knew it) is no sample event.
      if (!IsAppEvent(view->noise, t, i)) continue;
      ++view->files[static_cast<size_t>(it->second)].items;
      ++view->items;
    }
    view->data_events.push_back(i);
  }
  std::stable_sort(view->data_events.begin(), view->data_events.end(),
                   [&t](size_t a, size_t b) { return t.start_us[a] < t.start_us[b]; });
  return Status::OK();
}

}  // namespace dlio::fit
