// Finding a split's files as the Python DLIO does (main.py): list the split's folder (or its
// subfolders), keep the format's files, sort, take the first num_files_*. A folder may hold more
// files than a run uses (a subset of a larger dataset) and files dlio did not name.
#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "dlio/generator.h"
#include "generator/dataset_folder.h"

namespace dlio {
namespace {

bool IsDataName(const std::string& name, const std::vector<std::string>& extensions) {
  if (name.empty() || name[0] == '.') return false;  // hidden, staging folders, the marker
  for (const std::string& ext : extensions) {
    const std::string tail = "." + ext;
    if (name.size() > tail.size() &&
        name.compare(name.size() - tail.size(), tail.size(), tail) == 0)
      return true;
  }
  return false;
}

std::string Describe(const std::vector<std::string>& extensions) {
  std::string out;
  for (const std::string& ext : extensions) out += (out.empty() ? "*." : " or *.") + ext;
  return out;
}

// (name, path) of the data files directly in `dir`; with `subfolders`, of the folders in it.
Status Collect(Storage* storage, const std::string& dir, const std::vector<std::string>& extensions,
               bool subfolders, std::vector<std::pair<std::string, std::string>>* found) {
  DLIO_ASSIGN_OR_RETURN(std::vector<std::string> names, storage->List(dir));
  for (const std::string& name : names) {
    const std::string path = dir + "/" + name;
    if (!subfolders) {
      if (IsDataName(name, extensions)) found->emplace_back(name, path);
      continue;
    }
    if (name.empty() || name[0] == '.' || IsDataName(name, extensions)) continue;
    DLIO_ASSIGN_OR_RETURN(bool folder, storage->IsDirectory(path));
    if (folder) DLIO_RETURN_NOT_OK(Collect(storage, path, extensions, false, found));
  }
  return Status::OK();
}

}  // namespace

Result<std::vector<std::string>> ListDatasetFiles(const DatasetConfig& dataset,
                                                  const Format& format,
                                                  const FormatOptions& options, Split split,
                                                  Storage* storage) {
  const bool train = split == Split::kTrain;
  const uint64_t n = train ? dataset.num_files_train : dataset.num_files_eval;
  if (!format.uses_files() || n == 0) return DatasetFiles(dataset, format, split);
  if (storage == nullptr) return Status::InvalidArgument("ListDatasetFiles: storage is null");
  const bool subfolders = (train ? dataset.num_subfolders_train : dataset.num_subfolders_eval) > 1;
  const std::string dir = generator_internal::Folder(dataset) + (train ? "/train" : "/valid");
  const std::string key = train ? "dataset.num_files_train" : "dataset.num_files_eval";
  const std::vector<std::string> extensions = format.read_extensions();
  std::vector<std::pair<std::string, std::string>> found;
  Status listed = Collect(storage, dir, extensions, subfolders, &found);
  // A storage that cannot list has the files the generator names.
  if (listed.code() == StatusCode::kUnimplemented) return DatasetFiles(dataset, format, split);
  if (listed.code() == StatusCode::kNotFound)
    found.clear();
  else if (!listed.ok())
    return Status(listed.code(), "listing the dataset: " + listed.message());

  std::set<std::string> companions;
  for (const auto& [name, path] : found) {
    for (auto& c : format.CompanionFiles(path, options)) companions.insert(std::move(c));
  }
  found.erase(std::remove_if(found.begin(), found.end(),
                             [&](const auto& f) { return companions.count(f.second) > 0; }),
              found.end());
  if (found.size() < n) {
    return Status::NotFound(key, " is ", n, " but ", dir, listed.ok() ? "" : " (missing)",
                            " holds ", found.size(), " file(s) named ", Describe(extensions),
                            subfolders ? " in its subfolders" : "",
                            ": generate the dataset (workflow.generate_data) or lower ", key);
  }
  // By name, as DLIO sorts (with subfolders by base name, so file i of k folders comes i-th).
  std::sort(found.begin(), found.end());
  std::vector<std::string> files;
  files.reserve(n);
  for (uint64_t i = 0; i < n; ++i) files.push_back(std::move(found[i].second));
  return files;
}

}  // namespace dlio
