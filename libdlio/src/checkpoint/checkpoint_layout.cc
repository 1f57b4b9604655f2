#include "checkpoint/checkpoint_layout.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "core/owner_stamp.h"
#include "dlio/str_cat.h"

namespace dlio::checkpoint_internal {
std::string StripTrailingSlashes(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

std::string IdDirName(uint64_t id) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%s%06llu", kDirPrefix, static_cast<unsigned long long>(id));
  return buf;
}

std::optional<uint64_t> ParseIdDirName(const std::string& name) {
  const size_t n = std::strlen(kDirPrefix);
  if (name.size() <= n || name.size() > n + 19 || name.compare(0, n, kDirPrefix) != 0) {
    return std::nullopt;
  }
  uint64_t id = 0;
  for (size_t i = n; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return std::nullopt;
    id = id * 10 + static_cast<uint64_t>(name[i] - '0');
  }
  return id;
}

Result<std::vector<uint64_t>> ListIds(Storage* storage, const std::string& folder) {
  std::vector<uint64_t> ids;
  DLIO_ASSIGN_OR_RETURN(bool exists, storage->Exists(folder));
  if (!exists) return ids;
  DLIO_ASSIGN_OR_RETURN(auto names, storage->List(folder));
  for (const auto& name : names) {
    if (auto id = ParseIdDirName(name)) ids.push_back(*id);
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::string ManifestName(int rank) { return StrCat(".dlio-complete-rank", rank); }

Result<bool> IsCompleteShare(Storage* storage, const std::string& dir, int rank,
                             const std::vector<PlannedFile>& plan) {
  DLIO_ASSIGN_OR_RETURN(bool marked, storage->Exists(StrCat(dir, "/", ManifestName(rank))));
  if (!marked) return false;
  for (const auto& f : plan) {
    const std::string path = StrCat(dir, "/", f.name);
    DLIO_ASSIGN_OR_RETURN(bool there, storage->Exists(path));
    if (!there) return false;
    DLIO_ASSIGN_OR_RETURN(uint64_t bytes, storage->FileSize(path));
    if (bytes != f.bytes) return false;
  }
  return true;
}

Result<std::vector<std::string>> RemoveDeadTemporaries(Storage* storage,
                                                       const std::string& folder) {
  std::vector<std::string> removed;
  DLIO_ASSIGN_OR_RETURN(auto ids, ListIds(storage, folder));
  for (uint64_t id : ids) {
    const std::string dir = StrCat(folder, "/", IdDirName(id));
    DLIO_ASSIGN_OR_RETURN(bool is_dir, storage->IsDirectory(dir));
    if (!is_dir) continue;
    DLIO_ASSIGN_OR_RETURN(auto names, storage->List(dir));
    for (const auto& name : names) {
      if (!IsDeadOwnersLeftover(name, kAtomicTmpInfix)) continue;
      const std::string path = StrCat(dir, "/", name);
      // Remove never deletes a folder; a failure means another rank was first, or the file is
      // not ours to delete after all: either way it stays as it is.
      if (storage->Remove(path).ok()) removed.push_back(path);
    }
  }
  return removed;
}

}  // namespace dlio::checkpoint_internal
