// The data folder's marker, generation lock and ownership checks (see dataset_folder.h).
#include "generator/dataset_folder.h"

#include <unistd.h>

#include <set>

#include "core/owner_stamp.h"
#include "dlio/generator.h"
#include "format/hdf5/hdf5_options.h"
#include "format/npy_options.h"

namespace dlio::generator_internal {
namespace {

constexpr int kMarkerVersion = 1;
constexpr char kLockSignature[] = "dlio generation lock\n";

enum class FolderState { kMissing, kEmpty, kOurs, kForeign };

bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

Result<std::string> ReadWhole(Storage* storage, const std::string& path) {
  DLIO_ASSIGN_OR_RETURN(uint64_t size, storage->FileSize(path));
  DLIO_ASSIGN_OR_RETURN(auto file, storage->Open(path, OpenMode::kRead));
  std::string text(size, '\0');
  if (size > 0) DLIO_RETURN_NOT_OK(file->ReadExactAt(0, size, text.data()));
  DLIO_RETURN_NOT_OK(file->Close());
  return text;
}

Status CompareMarker(const std::string& marker_path, const std::string& folder,
                     const std::string& text, const nlohmann::json& wanted) {
  const nlohmann::json marker = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (marker.is_discarded() || !marker.is_object()) {
    return Status::Corruption("dataset marker " + marker_path + " is not a JSON object");
  }
  const auto version = marker.find("version");
  if (version == marker.end() || !version->is_number_integer() ||
      version->get<int64_t>() != kMarkerVersion) {
    return Status::FailedPrecondition("dataset marker ", marker_path, " has version ",
                                      version == marker.end() ? "none" : version->dump(),
                                      ", this dlio writes version ", kMarkerVersion,
                                      "; use another data_folder");
  }
  const auto params = marker.find("parameters");
  if (params == marker.end() || !params->is_object()) {
    return Status::Corruption("dataset marker " + marker_path + " has no \"parameters\" object");
  }
  for (const auto& [key, value] : wanted.items()) {
    const auto old = params->find(key);
    if (old == params->end() || *old != value) {
      return Status::FailedPrecondition(
          key + ": existing dataset in " + folder + " has " +
          (old == params->end() ? std::string("no value") : old->dump()) + ", config asks " +
          value.dump() + "; use another data_folder (the marker is " + marker_path + ")");
    }
  }
  return Status::OK();
}

// Written under a unique temporary name created with kCreateNew (never a file dlio did not
// create), then renamed into place.
Status WriteMarker(Storage* storage, const std::string& marker_path, const nlohmann::json& params) {
  nlohmann::json marker;
  marker["version"] = kMarkerVersion;
  marker["generator"] = "dlio";
  marker["parameters"] = params;
  const std::string text =
      marker.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  return WriteFileAtomically(storage, marker_path, text).WithContext("dataset marker");
}

// What the folder is. Names dlio leaves while it works there (its lock file, temporary markers)
// do not make a folder foreign. An entry named like the marker that cannot be read through (a
// dangling symbolic link) is refused rather than replaced.
Result<FolderState> InspectFolder(Storage* storage, const std::string& folder,
                                  const nlohmann::json& params) {
  const std::string marker_path = folder + "/" + kMarkerName;
  DLIO_ASSIGN_OR_RETURN(bool marker_exists, storage->Exists(marker_path));
  if (marker_exists) {
    DLIO_ASSIGN_OR_RETURN(std::string text, ReadWhole(storage, marker_path));
    DLIO_RETURN_NOT_OK(CompareMarker(marker_path, folder, text, params));
    return FolderState::kOurs;
  }
  DLIO_ASSIGN_OR_RETURN(bool folder_exists, storage->Exists(folder));
  if (!folder_exists) return FolderState::kMissing;
  DLIO_ASSIGN_OR_RETURN(auto names, storage->List(folder));
  bool empty = true;
  for (const auto& name : names) {
    if (name == kMarkerName) {
      return Status::AlreadyExists("dataset marker " + marker_path +
                                   " exists but cannot be read (a dangling symbolic link?); it "
                                   "is left alone: use another dataset.data_folder");
    }
    // ".dlio-dataset.json.tmp" too: what earlier dlio versions left (never written or removed).
    if (name == kLockName || StartsWith(name, std::string(kMarkerName) + ".tmp")) {
      continue;
    }
    empty = false;
  }
  return empty ? FolderState::kEmpty : FolderState::kForeign;
}

Status RefuseForeign(const std::string& folder) {
  return Status::AlreadyExists(
      "data folder " + folder + " is not empty and holds no dlio dataset marker (" + kMarkerName +
      "); refusing to generate into it: use an empty or new dataset.data_folder (or --force, "
      "which still never adopts, overwrites or deletes a file dlio did not write)");
}

// The first entry of a forced foreign folder at a dataset file's name or a companion's
// ("<name>.<suffix>"), or "" when there is none.
Result<std::string> FindConflict(Storage* storage, const DatasetConfig& dataset,
                                 const Format& format) {
  std::set<std::string> paths;
  std::set<std::string> parents;
  for (Split split : {Split::kTrain, Split::kEval}) {
    for (auto& path : DatasetFiles(dataset, format, split)) {
      parents.insert(path.substr(0, path.rfind('/')));
      paths.insert(std::move(path));
    }
  }
  for (const auto& parent : parents) {
    DLIO_ASSIGN_OR_RETURN(bool exists, storage->Exists(parent));
    if (!exists) continue;
    DLIO_ASSIGN_OR_RETURN(auto names, storage->List(parent));
    for (const auto& name : names) {
      const std::string path = parent + "/" + name;
      if (paths.count(path)) return path;
      for (size_t dot = name.find('.'); dot != std::string::npos; dot = name.find('.', dot + 1)) {
        if (paths.count(parent + "/" + name.substr(0, dot))) return path;
      }
    }
  }
  return std::string();
}

// Temporary markers of runs killed while writing the marker: removed when their name says a dead
// process of this host wrote them (core/owner_stamp.h), else reported (a live run's, another
// host's, an older dlio's ".tmp" or not dlio's at all: a user file may carry such a name).
Status CleanMarkerLeftovers(Storage* storage, const std::string& folder,
                            std::vector<std::string>* warnings, std::vector<std::string>* removed) {
  DLIO_ASSIGN_OR_RETURN(auto names, storage->List(folder));
  for (const auto& name : names) {
    if (!StartsWith(name, std::string(kMarkerName) + ".tmp")) continue;
    const std::string path = folder + "/" + name;
    if (name.size() > sizeof kMarkerName - 1 + sizeof kMarkerTmpInfix - 1 &&
        IsDeadOwnersLeftover(name, kMarkerTmpInfix)) {
      DLIO_ASSIGN_OR_RETURN(bool dir, storage->IsDirectory(path));
      if (!dir && storage->Remove(path).ok()) {
        removed->push_back(path);
        continue;
      }
    }
    warnings->push_back("left alone: " + path +
                        " (a temporary marker of an interrupted generation, or not dlio's: a run "
                        "removes only what it created itself and the leftovers of dead dlio "
                        "processes of this host; delete it by hand when no generation is running)");
  }
  return Status::OK();
}

// The holder a lock file names ("pid 123 on host h"), for the refusal message.
std::string LockHolder(Storage* storage, const std::string& path) {
  auto text = ReadWhole(storage, path);
  if (!text.ok() || !StartsWith(*text, kLockSignature)) return "holder unknown";
  std::string holder = text->substr(sizeof kLockSignature - 1);
  for (char& c : holder) {
    if (c == '\n') c = ' ';
  }
  while (!holder.empty() && holder.back() == ' ') holder.pop_back();
  return holder.empty() ? "holder unknown" : holder;
}

std::string HostName() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) return "unknown";
  return host;
}

}  // namespace

std::string Folder(const DatasetConfig& dataset) {
  std::string folder = dataset.data_folder.empty() ? "." : dataset.data_folder;
  while (folder.size() > 1 && folder.back() == '/') folder.pop_back();
  return folder;
}

// Knobs without effect are normalized (a compression level without compression) so changing
// them does not refuse an existing dataset.
nlohmann::json MarkerParams(const DatasetConfig& d, uint64_t seed) {
  const bool compressed = d.compression != "none" && !d.compression.empty();
  nlohmann::json p;
  p["dataset.format"] = d.format;
  p["dataset.file_prefix"] = d.file_prefix;
  p["dataset.num_files_train"] = d.num_files_train;
  p["dataset.num_files_eval"] = d.num_files_eval;
  p["dataset.num_samples_per_file"] = d.num_samples_per_file;
  p["dataset.record_length_bytes"] = d.record_length_bytes;
  p["dataset.record_length_bytes_stdev"] = d.record_length_bytes_stdev;
  // Only when given, so markers written before the key existed still match.
  if (!d.record_length_bytes_sizes.empty()) {
    p["dataset.record_length_bytes_sizes"] = d.record_length_bytes_sizes;
  }
  p["dataset.num_subfolders_train"] = d.num_subfolders_train > 1 ? d.num_subfolders_train : 0;
  p["dataset.num_subfolders_eval"] = d.num_subfolders_eval > 1 ? d.num_subfolders_eval : 0;
  p["dataset.compression"] = compressed ? d.compression : "none";
  p["dataset.compression_level"] = compressed ? d.compression_level : 0;
  const Hdf5Options& hdf5 = Hdf5Of(d.formats);
  p["dataset.enable_chunking"] = hdf5.enable_chunking;
  p["dataset.chunk_size"] = hdf5.enable_chunking ? hdf5.chunk_size : 0;
  // Only when not the default, so markers written before the key existed still match.
  const SampleLayout layout = NpyOf(d.formats).sample_layout;
  if (layout != SampleLayout::kFirstAxis) {
    p["dataset.sample_layout"] = std::string(EnumName(layout));
  }
  p["train.seed"] = seed;
  return p;
}

Status FolderClaim::Lock(const std::string& folder, std::vector<std::string>* warnings) {
  const std::string path = folder + "/" + kLockName;
  auto lock = storage_->TryLock(path);
  if (!lock.ok() && lock.status().code() == StatusCode::kUnimplemented) {
    warnings->push_back("no generation lock in " + folder + " (" + lock.status().message() +
                        "): nothing keeps a second generation out of this folder");
    return Status::OK();
  }
  DLIO_RETURN_NOT_OK(lock.status());
  if (*lock == nullptr) {
    return Status::AlreadyExists("data folder " + folder +
                                 " is being generated by another dlio run (" +
                                 LockHolder(storage_, path) + "; lock file " + path +
                                 "): wait for it to finish or use another dataset.data_folder");
  }
  // An existing lock file is a killed generation's (dlio's signature, or empty: killed before
  // writing it); anything else is not ours to write into or remove.
  DLIO_ASSIGN_OR_RETURN(std::string old, ReadWhole(storage_, path));
  if (!old.empty() && !StartsWith(old, kLockSignature)) {
    return Status::AlreadyExists("lock file " + path +
                                 " exists and was not written by dlio; it is left alone: use "
                                 "another dataset.data_folder");
  }
  lock_ = std::move(lock).value();
  path_ = path;
  const std::string text = std::string(kLockSignature) + "pid " + std::to_string(::getpid()) +
                           "\nhost " + HostName() + "\n";
  DLIO_ASSIGN_OR_RETURN(auto file, storage_->Open(path, OpenMode::kWrite));
  DLIO_RETURN_NOT_OK(file->WriteAt(0, text.data(), text.size()));
  return file->Close();
}

Status FolderClaim::Release() {
  if (lock_ == nullptr) return Status::OK();
  // Removed while still held: a run that opened the file meanwhile sees it replaced and retries.
  Status st = storage_->Remove(path_);
  lock_.reset();
  return st;
}

Status ClaimFolder(Storage* storage, const DatasetConfig& dataset, const Format& format,
                   const nlohmann::json& params, bool force, FolderClaim* claim,
                   std::vector<std::string>* warnings, std::vector<std::string>* removed) {
  const std::string folder = Folder(dataset);
  // Checked before the lock too, so a refused folder gets no lock file.
  DLIO_ASSIGN_OR_RETURN(FolderState before, InspectFolder(storage, folder, params));
  if (before == FolderState::kForeign && !force) return RefuseForeign(folder);
  DLIO_RETURN_NOT_OK(storage->CreateDirs(folder));
  DLIO_RETURN_NOT_OK(claim->Lock(folder, warnings));
  DLIO_ASSIGN_OR_RETURN(FolderState state, InspectFolder(storage, folder, params));
  DLIO_RETURN_NOT_OK(CleanMarkerLeftovers(storage, folder, warnings, removed));
  if (state == FolderState::kOurs) return Status::OK();
  if (state == FolderState::kForeign) {
    if (!force) return RefuseForeign(folder);
    DLIO_ASSIGN_OR_RETURN(std::string conflict, FindConflict(storage, dataset, format));
    if (!conflict.empty()) {
      return Status::AlreadyExists(
          "dataset file " + conflict + " already exists in " + folder +
          ", which holds no dlio dataset marker; it was not written by dlio, which never adopts, "
          "overwrites or deletes such a file, even with --force: move it away or use another "
          "dataset.data_folder");
    }
  }
  return WriteMarker(storage, folder + "/" + kMarkerName, params);
}

Status CheckFolder(Storage* storage, const DatasetConfig& dataset, const nlohmann::json& params,
                   bool force) {
  const std::string folder = Folder(dataset);
  DLIO_ASSIGN_OR_RETURN(FolderState state, InspectFolder(storage, folder, params));
  if (state == FolderState::kForeign && !force) return RefuseForeign(folder);
  return Status::OK();
}

}  // namespace dlio::generator_internal
