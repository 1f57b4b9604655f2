#include "checkpoint/checkpoint_layout.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "core/owner_stamp.h"
#include "dlio/str_cat.h"

namespace dlio::checkpoint_internal {
namespace {

// The number name[from..] spells, nullopt unless it is all decimal digits (callers bound its
// length to 19 digits).
std::optional<uint64_t> ParseDigits(const std::string& name, size_t from) {
  uint64_t value = 0;
  for (size_t i = from; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return std::nullopt;
    value = value * 10 + static_cast<uint64_t>(name[i] - '0');
  }
  return value;
}

}  // namespace

std::string StripTrailingSlashes(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

std::string EpochStepDirName(uint64_t epoch, int64_t step) {
  char buf[80];
  std::snprintf(buf, sizeof(buf), "global_epoch%llu_step%lld",
                static_cast<unsigned long long>(epoch), static_cast<long long>(step));
  return buf;
}

std::optional<uint64_t> ParseEpochStepDirName(const std::string& name, uint64_t epoch) {
  char prefix[48];
  const int n = std::snprintf(prefix, sizeof(prefix), "global_epoch%llu_step",
                              static_cast<unsigned long long>(epoch));
  const size_t len = static_cast<size_t>(n);
  if (name.size() <= len || name.size() > len + 19 || name.compare(0, len, prefix) != 0) {
    return std::nullopt;
  }
  return ParseDigits(name, len);
}

Result<bool> HasPlannedFiles(Storage* storage, const std::string& dir,
                             const std::vector<PlannedFile>& plan) {
  for (const auto& f : plan) {
    const std::string path = StrCat(dir, "/", f.name);
    DLIO_ASSIGN_OR_RETURN(bool there, storage->Exists(path));
    if (!there) return false;
    DLIO_ASSIGN_OR_RETURN(uint64_t bytes, storage->FileSize(path));
    if (bytes != f.bytes) return false;
  }
  return true;
}

std::string ManifestName(int rank) { return StrCat(".dlio-complete-rank", rank); }

Result<bool> IsCompleteShare(Storage* storage, const std::string& dir, int rank,
                             const std::vector<PlannedFile>& plan) {
  DLIO_ASSIGN_OR_RETURN(bool marked, storage->Exists(StrCat(dir, "/", ManifestName(rank))));
  if (!marked) return false;
  return HasPlannedFiles(storage, dir, plan);
}

Result<std::vector<std::string>> RemoveDeadTemporaries(Storage* storage, const std::string& folder,
                                                       const FolderNameTemplate& names) {
  std::vector<std::string> removed;
  DLIO_ASSIGN_OR_RETURN(bool exists, storage->Exists(folder));
  if (!exists) return removed;
  DLIO_ASSIGN_OR_RETURN(auto entries, storage->List(folder));
  for (const auto& entry : entries) {
    if (!names.Match(entry) && entry.rfind("global_epoch", 0) != 0) continue;
    const std::string dir = StrCat(folder, "/", entry);
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

Status WriteTagFile(Storage* storage, const std::string& path, const std::string& text) {
  DLIO_ASSIGN_OR_RETURN(auto file, storage->Open(path, OpenMode::kWrite));
  Status status = file->WriteAt(0, text.data(), text.size());
  Status closed = file->Close();
  return (status.ok() ? closed : status).WithContext(StrCat("checkpoint tag file ", path));
}

Status ReadTagFile(Storage* storage, const std::string& path) {
  DLIO_ASSIGN_OR_RETURN(bool exists, storage->Exists(path));
  if (!exists) return Status::OK();
  DLIO_ASSIGN_OR_RETURN(uint64_t size, storage->FileSize(path));
  DLIO_ASSIGN_OR_RETURN(auto file, storage->Open(path, OpenMode::kRead));
  std::string text(static_cast<size_t>(size) + 1, '\0');
  auto got = file->ReadSomeAt(0, text.size(), text.data());
  if (got.ok()) got = file->ReadSomeAt(*got, 1, text.data());
  Status closed = file->Close();
  return (got.ok() ? closed : got.status()).WithContext(StrCat("checkpoint tag file ", path));
}

}  // namespace dlio::checkpoint_internal
