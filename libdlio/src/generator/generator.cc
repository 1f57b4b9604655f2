// Dataset naming, per-file sample sizes and rank-partitioned generation with a marker file that
// makes a folder "ours" (so we never write into, or delete from, data we did not create).
#include "dlio/generator.h"

#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "dlio/clock.h"
#include "dlio/distribution.h"

namespace dlio {
namespace {

constexpr int kMarkerVersion = 1;
constexpr char kMarkerName[] = ".dlio-dataset.json";
constexpr char kTmpSuffix[] = ".tmp";

std::string Folder(const DatasetConfig& dataset) {
  std::string folder = dataset.data_folder.empty() ? "." : dataset.data_folder;
  while (folder.size() > 1 && folder.back() == '/') folder.pop_back();
  return folder;
}

std::string Pad(uint64_t value, size_t digits) {
  std::string s = std::to_string(value);
  if (s.size() < digits) s.insert(0, digits - s.size(), '0');
  return s;
}

uint64_t SplitIndex(Split split) { return split == Split::kTrain ? 0 : 1; }

uint64_t SplitMix64(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// A standard normal draw by Box-Muller on our own generator, so sizes are identical across
// standard libraries (std::normal_distribution is implementation-defined).
double StandardNormal(uint64_t* state) {
  constexpr double kTwoPi = 6.283185307179586476925;
  const double u1 = (static_cast<double>(SplitMix64(state) >> 11) + 1.0) * 0x1.0p-53;  // (0, 1]
  const double u2 = static_cast<double>(SplitMix64(state) >> 11) * 0x1.0p-53;          // [0, 1)
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
}

uint64_t DrawSize(const DatasetConfig& dataset, uint64_t* state) {
  const uint64_t mean = dataset.record_length_bytes;
  if (dataset.record_length_bytes_stdev == 0) return mean > 0 ? mean : 1;
  const double v = static_cast<double>(mean) +
                   static_cast<double>(dataset.record_length_bytes_stdev) * StandardNormal(state);
  return v < 1.0 ? 1 : static_cast<uint64_t>(std::llround(v));
}

// The parameters that decide what the files hold. Knobs without effect are normalized (a
// compression level without compression) so changing them does not refuse an existing dataset.
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
  p["dataset.num_subfolders_train"] = d.num_subfolders_train > 1 ? d.num_subfolders_train : 0;
  p["dataset.num_subfolders_eval"] = d.num_subfolders_eval > 1 ? d.num_subfolders_eval : 0;
  p["dataset.compression"] = compressed ? d.compression : "none";
  p["dataset.compression_level"] = compressed ? d.compression_level : 0;
  p["dataset.enable_chunking"] = d.enable_chunking;
  p["dataset.chunk_size"] = d.enable_chunking ? d.chunk_size : 0;
  // Only when not the default, so markers written before the key existed still match.
  if (d.sample_layout != "first_axis") p["dataset.sample_layout"] = d.sample_layout;
  p["train.seed"] = seed;
  return p;
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
    return Status::FailedPrecondition("dataset marker " + marker_path + " has version " +
                                      (version == marker.end() ? "none" : version->dump()) +
                                      ", this dlio writes version " +
                                      std::to_string(kMarkerVersion) + "; use another data_folder");
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

Status WriteMarker(Storage* storage, const std::string& marker_path, const nlohmann::json& params) {
  nlohmann::json marker;
  marker["version"] = kMarkerVersion;
  marker["generator"] = "dlio";
  marker["parameters"] = params;
  const std::string text = marker.dump(2) + "\n";
  const std::string tmp = marker_path + kTmpSuffix;
  Status status = [&]() -> Status {
    // kWrite: the .tmp name is our own temporary, a leftover of an interrupted generation.
    DLIO_ASSIGN_OR_RETURN(auto file, storage->Open(tmp, OpenMode::kWrite));
    DLIO_RETURN_NOT_OK(file->WriteAt(0, text.data(), text.size()));
    DLIO_RETURN_NOT_OK(file->Close());
    return storage->Rename(tmp, marker_path);
  }();
  if (!status.ok()) {
    (void)storage->Remove(tmp);  // best effort; `status` is the error that matters
    return status.WithContext("writing dataset marker " + marker_path);
  }
  return Status::OK();
}

// Checks that `folder` is ours (or empty, or forced) and matches the requested parameters;
// with `may_write_marker`, writes the marker when it is missing. `owned` tells whether the
// folder held our marker before, or was empty (leftover staging files in it are then ours).
Status CheckFolder(Storage* storage, const DatasetConfig& dataset, const nlohmann::json& params,
                   bool force, bool may_write_marker, bool* owned) {
  const std::string folder = Folder(dataset);
  const std::string marker_path = DatasetMarkerPath(dataset);
  *owned = false;
  DLIO_ASSIGN_OR_RETURN(bool marker_exists, storage->Exists(marker_path));
  if (marker_exists) {
    DLIO_ASSIGN_OR_RETURN(std::string text, ReadWhole(storage, marker_path));
    DLIO_RETURN_NOT_OK(CompareMarker(marker_path, folder, text, params));
    *owned = true;
    return Status::OK();
  }
  DLIO_ASSIGN_OR_RETURN(bool folder_exists, storage->Exists(folder));
  if (!folder_exists) *owned = true;
  if (folder_exists) {
    DLIO_ASSIGN_OR_RETURN(auto names, storage->List(folder));
    bool empty = true;
    for (const auto& name : names) {
      if (name != std::string(kMarkerName) + kTmpSuffix) empty = false;
    }
    if (empty) *owned = true;  // nothing foreign in it: whatever appears in it is ours
    if (!empty && !force) {
      return Status::AlreadyExists(
          "data folder " + folder + " is not empty and holds no dlio dataset marker (" +
          kMarkerName +
          "); refusing to generate into it: use an empty or new dataset.data_folder "
          "(or --force, which still never overwrites or deletes an existing file)");
    }
  }
  if (may_write_marker) {
    DLIO_RETURN_NOT_OK(storage->CreateDirs(folder));
    DLIO_RETURN_NOT_OK(WriteMarker(storage, marker_path, params));
  }
  return Status::OK();
}

// Files are written into a per-rank staging directory beside their final place,
// <parent>/.dlio-tmp-rank<r>/, and every entry the format wrote there (the file and companions
// such as indexed_binary's "<file>.off.idx") is renamed into <parent>: companions first, the file
// last, so a file under its final name is always complete. The directory holds only what this
// rank wrote, so leftovers of a crashed run are ours to remove -- when the folder is ours.
class Staging {
 public:
  Staging(Storage* storage, int rank, bool owned)
      : storage_(storage), name_(".dlio-tmp-rank" + std::to_string(rank)), owned_(owned) {}
  // After a failure: best effort to leave no staged bytes behind (all of them are ours).
  ~Staging() {
    for (const auto& dir : dirs_) {
      if (Clear(dir).ok()) (void)storage_->RemoveEmptyDir(dir);
    }
  }
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;

  Status Write(const Format& format, const FormatOptions& format_options, const FileSpec& spec,
               const std::string& path) {
    const size_t slash = path.rfind('/');
    const std::string parent = slash == std::string::npos ? "." : path.substr(0, slash);
    const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
    const std::string dir = parent + "/" + name_;
    if (dirs_.count(dir) == 0) {
      DLIO_RETURN_NOT_OK(Prepare(dir));
      dirs_.insert(dir);  // only now: a refused folder is never cleared by the destructor
    }
    Status status = format.Write(storage_, dir + "/" + base, spec, format_options);
    if (!status.ok()) return status.WithContext("generating " + path);
    DLIO_ASSIGN_OR_RETURN(auto names, storage_->List(dir));
    bool has_main = false;
    for (const auto& name : names) {
      if (name == base) {
        has_main = true;
        continue;
      }
      DLIO_RETURN_NOT_OK(MoveUp(dir, parent, name));
    }
    if (!has_main) {
      return Status::Internal("format " + format.name() + " wrote no file at " + dir + "/" + base);
    }
    return MoveUp(dir, parent, base);
  }

  // Removes the (now empty) staging directories.
  Status Finish() {
    for (const auto& dir : dirs_) DLIO_RETURN_NOT_OK(storage_->RemoveEmptyDir(dir));
    dirs_.clear();
    return Status::OK();
  }

 private:
  Status Prepare(const std::string& dir) {
    DLIO_ASSIGN_OR_RETURN(bool exists, storage_->Exists(dir));
    if (!exists) return storage_->CreateDirs(dir);
    if (!owned_) {
      return Status::AlreadyExists("staging folder " + dir +
                                   " exists in a data folder without a dlio marker; it is not ours "
                                   "to clear: use another data_folder");
    }
    return Clear(dir);  // a crashed run of ours left it
  }

  Status Clear(const std::string& dir) {
    DLIO_ASSIGN_OR_RETURN(auto names, storage_->List(dir));
    for (const auto& name : names) {
      DLIO_RETURN_NOT_OK(storage_->Remove(dir + "/" + name).WithContext("clearing " + dir));
    }
    return Status::OK();
  }

  Status MoveUp(const std::string& dir, const std::string& parent, const std::string& name) {
    const std::string to = parent + "/" + name;
    DLIO_ASSIGN_OR_RETURN(bool taken, storage_->Exists(to));
    if (taken) {
      return Status::AlreadyExists("dataset file " + to +
                                   " already exists and was not written by this run; it is left "
                                   "alone: use another data_folder");
    }
    return storage_->Rename(dir + "/" + name, to);
  }

  Storage* storage_;
  std::string name_;
  bool owned_;
  std::set<std::string> dirs_;
};

struct Job {
  Split split;
  uint64_t index;
  std::string path;
};

// OK on every rank when `mine` is OK on every rank; else the failed ranks keep their error and
// the others get Cancelled naming `what`.
Status Agree(Comm* comm, const Status& mine, const std::string& what) {
  std::vector<double> failed{mine.ok() ? 0.0 : 1.0};
  Status reduced = comm->AllReduceMax(&failed);
  if (!mine.ok()) return mine;
  DLIO_RETURN_NOT_OK(reduced);
  if (failed[0] > 0) return Status::Cancelled(what + ": another rank failed (its error says why)");
  return Status::OK();
}

// A one-file split written by all ranks together (Format::WriteShared), staged in
// "<parent>/.dlio-tmp-shared/" (a name no rank's own staging uses) that rank 0 prepares and,
// after the write, moves up and removes. Collective; sets *written on rank 0 when it wrote the
// file (false when an earlier run had).
Status WriteSharedFile(Storage* storage, const Format& format, const FormatOptions& fo,
                       const FileSpec& spec, const std::string& path, bool compressed, bool owned,
                       const SharedWrite& shared, bool* written) {
  *written = false;
  const size_t slash = path.rfind('/');
  const std::string parent = slash == std::string::npos ? "." : path.substr(0, slash);
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  const std::string dir = parent + "/.dlio-tmp-shared";
  const std::string staged = dir + "/" + base;
  uint64_t payload = 0;
  for (uint64_t s : spec.sample_sizes) payload += s;
  // Rank 0 decides: "skip" (an earlier run wrote it), "write", or an error.
  std::string decision;
  Status mine;
  if (shared.rank == 0) {
    mine = [&]() -> Status {
      DLIO_ASSIGN_OR_RETURN(bool exists, storage->Exists(path));
      if (exists) {
        DLIO_ASSIGN_OR_RETURN(uint64_t size, storage->FileSize(path));
        if (compressed ? size > 0 : size >= payload) {
          decision = "skip";
          return Status::OK();
        }
        return Status::AlreadyExists("dataset file " + path + " already exists with " +
                                     std::to_string(size) +
                                     " bytes, but this dataset's file holds more; it was not "
                                     "written by this dataset, so it is left alone: use another "
                                     "data_folder");
      }
      DLIO_ASSIGN_OR_RETURN(bool dir_exists, storage->Exists(dir));
      if (dir_exists) {
        if (!owned) {
          return Status::AlreadyExists("staging folder " + dir +
                                       " exists in a data folder without a dlio marker; it is not "
                                       "ours to clear: use another data_folder");
        }
        DLIO_ASSIGN_OR_RETURN(auto names, storage->List(dir));
        for (const auto& name : names) DLIO_RETURN_NOT_OK(storage->Remove(dir + "/" + name));
      } else {
        DLIO_RETURN_NOT_OK(storage->CreateDirs(dir));
      }
      decision = "write";
      return Status::OK();
    }();
  }
  DLIO_RETURN_NOT_OK(Agree(shared.comm, mine, "preparing shared file " + path));
  DLIO_RETURN_NOT_OK(shared.comm->Broadcast(&decision, 0));
  if (decision == "skip") return Status::OK();
  Status st = format.WriteShared(storage, staged, spec, fo, shared);
  if (st.ok() && shared.rank == 0) {
    st = [&]() -> Status {
      DLIO_ASSIGN_OR_RETURN(auto names, storage->List(dir));
      bool has_main = false;
      for (const auto& name : names) {
        if (name == base) {
          has_main = true;
          continue;
        }
        DLIO_RETURN_NOT_OK(storage->Rename(dir + "/" + name, parent + "/" + name));
      }
      if (!has_main) {
        return Status::Internal("format " + format.name() + " wrote no file at " + staged);
      }
      DLIO_RETURN_NOT_OK(storage->Rename(staged, path));
      *written = true;
      return storage->RemoveEmptyDir(dir);
    }();
  }
  if (!st.ok() && shared.rank == 0) {
    // WriteShared removed its own files; leave no staging folder behind either.
    auto names = storage->List(dir);
    if (names.ok()) {
      for (const auto& name : *names) (void)storage->Remove(dir + "/" + name);
      (void)storage->RemoveEmptyDir(dir);
    }
  }
  return Agree(shared.comm, st.WithContext("generating " + path), "generating " + path);
}

}  // namespace

std::vector<std::string> DatasetFiles(const DatasetConfig& dataset, const Format& format,
                                      Split split) {
  const uint64_t n = split == Split::kTrain ? dataset.num_files_train : dataset.num_files_eval;
  const uint64_t k =
      split == Split::kTrain ? dataset.num_subfolders_train : dataset.num_subfolders_eval;
  const std::string base = Folder(dataset) + (split == Split::kTrain ? "/train/" : "/valid/");
  const std::string ext = format.extension();
  const std::string suffix = "_of_" + std::to_string(n) + (ext.empty() ? "" : "." + ext);
  const size_t file_digits = std::to_string(n).size();
  const size_t folder_digits = std::to_string(k).size();
  std::vector<std::string> files;
  files.reserve(n);
  for (uint64_t i = 0; i < n; ++i) {
    std::string path = base;
    if (k > 1) path += Pad(i % k, folder_digits) + "/";
    path += dataset.file_prefix + "_" + Pad(i, file_digits) + suffix;
    files.push_back(std::move(path));
  }
  return files;
}

FileSpec DatasetFileSpec(const DatasetConfig& dataset, const Format& format, Split split,
                         uint64_t file_index, uint64_t seed) {
  FileSpec spec;
  uint64_t state = MixSeed(seed, SplitIndex(split), file_index, 0x5123e5ULL);
  spec.seed = MixSeed(seed, SplitIndex(split), file_index, 0xc07e27ULL);
  const uint64_t samples = dataset.num_samples_per_file;
  spec.sample_sizes.reserve(samples);
  if (format.variable_sample_sizes()) {
    for (uint64_t i = 0; i < samples; ++i) spec.sample_sizes.push_back(DrawSize(dataset, &state));
  } else {
    spec.sample_sizes.assign(samples, DrawSize(dataset, &state));
  }
  return spec;
}

std::string DatasetMarkerPath(const DatasetConfig& dataset) {
  return Folder(dataset) + "/" + kMarkerName;
}

Result<GenerateReport> GenerateDataset(const DatasetConfig& dataset, const Format& format,
                                       const FormatOptions& format_options, Storage* storage,
                                       const GenerateOptions& options) {
  const Clock* clock = SystemClock();
  const int64_t start = clock->NowNanos();
  GenerateReport report;
  if (options.world < 1 || options.rank < 0 || options.rank >= options.world) {
    return Status::InvalidArgument("generate: rank " + std::to_string(options.rank) +
                                   " is not in a world of " + std::to_string(options.world));
  }
  if (!format.uses_files()) {  // synthetic: nothing to write, but keep the collective contract
    if (options.barrier) DLIO_RETURN_NOT_OK(options.barrier());
    return report;
  }
  if (storage == nullptr) return Status::InvalidArgument("generate: storage is null");

  const nlohmann::json params = MarkerParams(dataset, options.seed);
  bool owned = false;
  if (options.barrier) {
    Status mine;
    if (options.rank == 0)
      mine = CheckFolder(storage, dataset, params, options.force, true, &owned);
    Status barrier = options.barrier();
    DLIO_RETURN_NOT_OK(mine);
    DLIO_RETURN_NOT_OK(barrier);
    if (options.rank != 0) {
      DLIO_RETURN_NOT_OK(CheckFolder(storage, dataset, params, options.force, false, &owned));
    }
  } else {
    DLIO_RETURN_NOT_OK(
        CheckFolder(storage, dataset, params, options.force, options.rank == 0, &owned));
  }

  // Compressed files may be smaller than their payload (either knob may carry the setting).
  auto is_compressed = [](const std::string& c) { return !c.empty() && c != "none"; };
  const bool compressed =
      is_compressed(dataset.compression) || is_compressed(format_options.compression);

  SharedWrite shared;
  shared.rank = options.rank;
  shared.world = options.world;
  shared.comm = options.comm;
  const bool can_share = options.comm != nullptr && options.world > 1 &&
                         format.CanWriteShared(*storage, format_options, shared);
  std::vector<Job> jobs, shared_jobs;
  const uint64_t world = static_cast<uint64_t>(options.world);
  const uint64_t rank = static_cast<uint64_t>(options.rank);
  for (Split split : {Split::kTrain, Split::kEval}) {
    const auto files = DatasetFiles(dataset, format, split);
    if (can_share && files.size() == 1) {
      shared_jobs.push_back({split, 0, files[0]});
      continue;
    }
    for (uint64_t i = rank; i < files.size(); i += world) jobs.push_back({split, i, files[i]});
  }

  // Shared files first, every rank in the same order (the writes are collective).
  for (const Job& job : shared_jobs) {
    const FileSpec spec = DatasetFileSpec(dataset, format, job.split, job.index, options.seed);
    bool written = false;
    DLIO_RETURN_NOT_OK(WriteSharedFile(storage, format, format_options, spec, job.path, compressed,
                                       owned, shared, &written));
    if (options.rank == 0) {
      if (written) {
        DLIO_ASSIGN_OR_RETURN(uint64_t size, storage->FileSize(job.path));
        report.bytes_written += size;
        ++report.files_written;
      } else {
        ++report.files_skipped;
      }
    }
  }

  Staging staging(storage, options.rank, owned);
  uint64_t done = 0;
  for (const Job& job : jobs) {
    const FileSpec spec = DatasetFileSpec(dataset, format, job.split, job.index, options.seed);
    uint64_t payload = 0;
    for (uint64_t s : spec.sample_sizes) payload += s;

    DLIO_ASSIGN_OR_RETURN(bool exists, storage->Exists(job.path));
    if (exists) {
      DLIO_ASSIGN_OR_RETURN(uint64_t size, storage->FileSize(job.path));
      const bool plausible = compressed ? size > 0 : size >= payload;
      if (!plausible) {
        return Status::AlreadyExists(
            "dataset file " + job.path + " already exists with " + std::to_string(size) +
            " bytes, but this dataset's file holds " +
            (compressed ? std::string("some") : "at least " + std::to_string(payload)) +
            " bytes; it was not written by this dataset, so it is left alone: use another "
            "data_folder");
      }
      ++report.files_skipped;
    } else {
      DLIO_RETURN_NOT_OK(staging.Write(format, format_options, spec, job.path));
      DLIO_ASSIGN_OR_RETURN(uint64_t size, storage->FileSize(job.path));
      report.bytes_written += size;
      ++report.files_written;
    }
    ++done;
    if (options.progress) options.progress(done, jobs.size(), report.bytes_written);
  }
  DLIO_RETURN_NOT_OK(staging.Finish());
  report.duration_ns = clock->NowNanos() - start;
  return report;
}

}  // namespace dlio
