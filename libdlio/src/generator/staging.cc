// Staging folders, moving a file and its companions into place, and the completeness check of
// files an earlier run left (see staging.h).
#include "generator/staging.h"

#include <algorithm>
#include <memory>
#include <string_view>
#include <utility>

#include "core/owner_stamp.h"
#include "generator/dataset_folder.h"

namespace dlio::generator_internal {

std::string ParentOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

std::string BaseOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

Result<bool> DirIndex::Has(const std::string& dir, const std::string& name) {
  auto it = listed_.find(dir);
  if (it == listed_.end()) {
    std::vector<std::string> names;
    DLIO_ASSIGN_OR_RETURN(bool exists, storage_->Exists(dir));
    if (exists) {
      DLIO_ASSIGN_OR_RETURN(names, storage_->List(dir));
    }
    std::sort(names.begin(), names.end());
    it = listed_.emplace(dir, std::move(names)).first;
  }
  return std::binary_search(it->second.begin(), it->second.end(), name);
}

std::vector<std::string> DirIndex::Matching(const std::string& prefix) const {
  std::vector<std::string> out;
  for (const auto& [dir, names] : listed_) {
    for (auto n = std::lower_bound(names.begin(), names.end(), prefix);
         n != names.end() && n->compare(0, prefix.size(), prefix) == 0; ++n) {
      out.push_back(dir + "/" + *n);
    }
  }
  return out;
}

void DirIndex::Erase(const std::string& dir, const std::string& name) {
  auto it = listed_.find(dir);
  if (it == listed_.end()) return;
  auto& names = it->second;
  auto at = std::lower_bound(names.begin(), names.end(), name);
  if (at != names.end() && *at == name) names.erase(at);
}

Status CheckComplete(Storage* storage, const Format& format, const FormatOptions& options,
                     const std::string& path, const FileSpec& spec, bool compressed) {
  const std::string left_alone =
      "; it was not written by this dataset, so it is left alone: use another data_folder";
  DLIO_ASSIGN_OR_RETURN(bool readable, storage->Exists(path));
  if (!readable) {
    return Status::AlreadyExists("dataset file " + path +
                                 " exists but cannot be read through (a dangling symbolic link?)" +
                                 left_alone);
  }
  if (format.exact_sample_sizes() && !compressed) {
    uint64_t payload = 0;
    for (uint64_t s : spec.sample_sizes) payload += s;
    DLIO_ASSIGN_OR_RETURN(uint64_t size, storage->FileSize(path));
    if (size >= payload) return Status::OK();
    return Status::AlreadyExists("dataset file ", path, " already exists with ", size,
                                 " bytes, but this dataset's file holds at least ", payload,
                                 " bytes", left_alone);
  }
  // The stored size says little (an encoding, or compressed): the file must open as this format
  // and hold the expected number of samples. Decoding is not asked for (no decoded-size limit).
  FormatOptions check = options;
  check.decode = false;
  auto reader = format.Open(storage, path, check);
  if (!reader.ok()) {
    return Status::AlreadyExists("dataset file " + path + " already exists but does not open as " +
                                 format.name() + " (" + reader.status().ToString() + ")" +
                                 left_alone);
  }
  const uint64_t samples = (*reader)->num_samples();
  if (samples == spec.sample_sizes.size()) return Status::OK();
  return Status::AlreadyExists("dataset file ", path, " already exists with ", samples,
                               " samples, but this dataset's file has ", spec.sample_sizes.size(),
                               left_alone);
}

namespace {

Status Blocked(const std::string& path, const std::string& why) {
  return Status::AlreadyExists("dataset file " + path + " already exists (" + why +
                               ") and was not written by this run; it is left alone: use "
                               "another data_folder");
}

// A companion at its final name: replaced when it is a regular file (an orphan dlio wrote).
Status MoveCompanion(Storage* storage, DirIndex* index, const std::string& from,
                     const std::string& parent, const std::string& name) {
  const std::string to = parent + "/" + name;
  DLIO_ASSIGN_OR_RETURN(bool taken, index->Has(parent, name));
  if (taken) {
    DLIO_ASSIGN_OR_RETURN(bool readable, storage->Exists(to));
    if (!readable) return Blocked(to, "a dangling symbolic link?");
    DLIO_ASSIGN_OR_RETURN(bool dir, storage->IsDirectory(to));
    if (dir) return Blocked(to, "a directory");
  }
  return storage->Rename(from, to);  // replaces an orphan atomically
}

}  // namespace

Status MoveUnit(Storage* storage, DirIndex* index, const Format& format,
                const std::string& staged_dir, const std::string& parent, const std::string& base) {
  DLIO_ASSIGN_OR_RETURN(auto names, storage->List(staged_dir));
  if (std::find(names.begin(), names.end(), base) == names.end()) {
    return Status::Internal("format " + format.name() + " wrote no file at " + staged_dir + "/" +
                            base);
  }
  for (const auto& name : names) {
    if (name == base) continue;
    DLIO_RETURN_NOT_OK(MoveCompanion(storage, index, staged_dir + "/" + name, parent, name));
  }
  return storage->Rename(staged_dir + "/" + base, parent + "/" + base);
}

void RemoveStagingDir(Storage* storage, const std::string& dir) {
  auto names = storage->List(dir);
  if (!names.ok()) return;
  for (const auto& name : *names) (void)storage->Remove(dir + "/" + name);
  (void)storage->RemoveEmptyDir(dir);
}

namespace {

// Whether `name` is a staging folder name of a dead owner.
bool IsDeadStagingName(const std::string& name) {
  const std::string prefix = kStagingPrefix;
  if (name.compare(0, prefix.size(), prefix) != 0) return false;
  std::string_view rest(name);
  rest.remove_prefix(prefix.size());
  if (rest.compare(0, 7, "shared-") == 0) {
    rest.remove_prefix(7);
  } else if (rest.compare(0, 4, "rank") == 0) {
    rest.remove_prefix(4);
    size_t digits = 0;
    while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') ++digits;
    if (digits == 0 || digits >= rest.size() || rest[digits] != '-') return false;
    rest.remove_prefix(digits + 1);
  } else {
    return false;
  }
  const auto stamp = ParseOwnerToken(rest);
  return stamp && OwnerIsDead(*stamp);
}

// Removes the regular files directly in `dir`, then `dir`; false when something stays.
bool RemoveLeftoverDir(Storage* storage, const std::string& dir) {
  auto names = storage->List(dir);
  if (!names.ok()) return false;
  for (const auto& name : *names) {
    const std::string path = dir + "/" + name;
    auto is_dir = storage->IsDirectory(path);
    if (!is_dir.ok() || *is_dir) return false;  // dlio stages no folder in a staging folder
    if (!storage->Remove(path).ok()) return false;
  }
  return storage->RemoveEmptyDir(dir).ok();
}

}  // namespace

std::vector<std::string> RemoveDeadStaging(Storage* storage, DirIndex* index) {
  std::vector<std::string> removed;
  for (const auto& path : index->Matching(kStagingPrefix)) {
    const std::string dir = ParentOf(path), name = BaseOf(path);
    if (!IsDeadStagingName(name)) continue;
    auto is_dir = storage->IsDirectory(path);
    if (!is_dir.ok() || !*is_dir) continue;
    if (!RemoveLeftoverDir(storage, path)) continue;
    index->Erase(dir, name);
    removed.push_back(path);
  }
  return removed;
}

Staging::Staging(Storage* storage, DirIndex* index, int rank, const std::string& token)
    : storage_(storage),
      index_(index),
      name_(std::string(kStagingPrefix) + "rank" + std::to_string(rank) + "-" + token) {}

Staging::~Staging() {
  for (const auto& dir : dirs_) RemoveStagingDir(storage_, dir);
}

Status Staging::Write(const Format& format, const FormatOptions& options, const FileSpec& spec,
                      const std::string& path) {
  const std::string parent = ParentOf(path);
  const std::string dir = parent + "/" + name_;
  if (dirs_.count(dir) == 0) {
    DLIO_ASSIGN_OR_RETURN(bool exists, storage_->Exists(dir));
    if (exists) {  // the name is unique to this run: someone else made it
      return Status::AlreadyExists("staging folder " + dir +
                                   " exists before this run created it; it is left alone");
    }
    DLIO_RETURN_NOT_OK(storage_->CreateDirs(dir));
    dirs_.insert(dir);  // only now: the destructor clears only folders this run created
  }
  const std::string base = BaseOf(path);
  Status status = format.Write(storage_, dir + "/" + base, spec, options);
  if (!status.ok()) return status.WithContext("generating " + path);
  return MoveUnit(storage_, index_, format, dir, parent, base);
}

Status Staging::Finish() {
  for (const auto& dir : dirs_) DLIO_RETURN_NOT_OK(storage_->RemoveEmptyDir(dir));
  dirs_.clear();
  return Status::OK();
}

}  // namespace dlio::generator_internal
