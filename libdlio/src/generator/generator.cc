// Dataset naming, per-file sample sizes and rank-partitioned generation with a marker file that
// makes a folder "ours" (so we never write into, or delete from, data we did not create).
#include "dlio/generator.h"

#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "core/owner_stamp.h"
#include "dlio/clock.h"
#include "dlio/distribution.h"
#include "format/content.h"
#include "format/io_util.h"
#include "generator/dataset_folder.h"
#include "generator/shared_file.h"
#include "generator/staging.h"

namespace dlio {
namespace {

using generator_internal::Folder;

std::string Pad(uint64_t value, size_t digits) {
  std::string s = std::to_string(value);
  if (s.size() < digits) s.insert(0, digits - s.size(), '0');
  return s;
}

uint64_t SplitIndex(Split split) { return split == Split::kTrain ? 0 : 1; }

// The sample size of file `file_index`: its entry of record_length_bytes_sizes when given, else
// a draw from record_length_bytes and its stdev.
uint64_t DrawSize(const DatasetConfig& dataset, uint64_t file_index, uint64_t* state) {
  const std::vector<uint64_t>& sizes = dataset.record_length_bytes_sizes;
  if (!sizes.empty()) return sizes[file_index % sizes.size()];
  const uint64_t mean = dataset.record_length_bytes;
  if (dataset.record_length_bytes_stdev == 0) return mean > 0 ? mean : 1;
  const double v =
      static_cast<double>(mean) + static_cast<double>(dataset.record_length_bytes_stdev) *
                                      format_internal::StandardNormal(state);
  return v < 1.0 ? 1 : static_cast<uint64_t>(std::llround(v));
}

struct Job {
  Split split;
  uint64_t index;
  std::string path;
};

// Compressed files may be smaller than their payload (either knob may carry the setting).
bool Compressed(const DatasetConfig& dataset, const FormatOptions& options) {
  auto is_compressed = [](const std::string& c) { return !c.empty() && c != "none"; };
  return is_compressed(dataset.compression) || is_compressed(options.compression);
}

// Files are named <data_folder>/<split>/<file_prefix>_<i>_of_<n>.<ext>: a prefix naming a folder
// would write elsewhere, and names starting with ".dlio-" are dlio's own (marker, lock, staging).
Status CheckFilePrefix(const std::string& prefix) {
  if (prefix.find('/') != std::string::npos || prefix.find('\0') != std::string::npos) {
    return Status::InvalidArgument(
        "dataset.file_prefix: \"" + prefix +
        "\" is not a plain file-name part (it holds a '/' or a NUL byte); files are named "
        "<data_folder>/train/<file_prefix>_<i>_of_<n>.<ext>, so the prefix cannot name a folder");
  }
  if (prefix.compare(0, 6, ".dlio-") == 0) {
    return Status::InvalidArgument("dataset.file_prefix: \"" + prefix +
                                   "\" starts with \".dlio-\", which names dlio's own files");
  }
  return Status::OK();
}

// Lists the folders this rank writes into and removes the staging folders dead dlio processes of
// this host left there (a killed generation's), so their space is free before writing.
Status RemoveDeadLeftovers(Storage* storage, const std::vector<Job>& jobs,
                           const std::vector<Job>& shared_jobs, generator_internal::DirIndex* index,
                           GenerateReport* report) {
  std::set<std::string> parents;
  for (const auto* list : {&jobs, &shared_jobs}) {
    for (const Job& job : *list) parents.insert(generator_internal::ParentOf(job.path));
  }
  for (const auto& parent : parents) {
    DLIO_RETURN_NOT_OK(index->Has(parent, generator_internal::kStagingPrefix).status());
  }
  for (auto& path : generator_internal::RemoveDeadStaging(storage, index)) {
    report->removed_leftovers.push_back(std::move(path));
  }
  return Status::OK();
}

// This rank's share of the files: the shared one-file splits first (collective, every rank in
// the same order), then its own files, each kept when an earlier run completed it.
Status WriteFiles(const DatasetConfig& dataset, const Format& format,
                  const FormatOptions& format_options, Storage* storage,
                  const GenerateOptions& options, GenerateReport* report) {
  const bool compressed = Compressed(dataset, format_options);
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
  const std::string token = UniqueOwnerToken();
  generator_internal::DirIndex index(storage);
  DLIO_RETURN_NOT_OK(RemoveDeadLeftovers(storage, jobs, shared_jobs, &index, report));
  for (const Job& job : shared_jobs) {
    const FileSpec spec = DatasetFileSpec(dataset, format, job.split, job.index, options.seed);
    bool written = false;
    DLIO_RETURN_NOT_OK(generator_internal::WriteSharedFile(storage, &index, format, format_options,
                                                           spec, job.path, compressed, shared,
                                                           token, &written));
    if (options.rank != 0) continue;
    if (written) {
      DLIO_ASSIGN_OR_RETURN(uint64_t size, storage->FileSize(job.path));
      report->bytes_written += size;
      ++report->files_written;
      report->created_files.push_back(job.path);
    } else {
      ++report->files_skipped;
    }
  }

  generator_internal::Staging staging(storage, &index, options.rank, token);
  uint64_t done = 0;
  for (const Job& job : jobs) {
    const FileSpec spec = DatasetFileSpec(dataset, format, job.split, job.index, options.seed);
    DLIO_ASSIGN_OR_RETURN(bool present, index.Has(generator_internal::ParentOf(job.path),
                                                  generator_internal::BaseOf(job.path)));
    if (present) {
      DLIO_RETURN_NOT_OK(generator_internal::CheckComplete(storage, format, format_options,
                                                           job.path, spec, compressed));
      ++report->files_skipped;
    } else {
      DLIO_RETURN_NOT_OK(staging.Write(format, format_options, spec, job.path));
      DLIO_ASSIGN_OR_RETURN(uint64_t size, storage->FileSize(job.path));
      report->bytes_written += size;
      ++report->files_written;
      report->created_files.push_back(job.path);
    }
    ++done;
    if (options.progress) options.progress(done, jobs.size(), report->bytes_written);
  }
  DLIO_RETURN_NOT_OK(staging.Finish());
  if (options.rank != 0) return Status::OK();
  for (const auto& path : index.Matching(generator_internal::kStagingPrefix)) {
    report->warnings.push_back(
        "left alone: " + path +
        " (a staging folder of an interrupted generation, or not dlio's: a run removes only what "
        "it created itself and the staging folders of dead dlio processes of this host; delete it "
        "by hand when no generation is running)");
  }
  return Status::OK();
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
    for (uint64_t i = 0; i < samples; ++i) {
      spec.sample_sizes.push_back(DrawSize(dataset, file_index, &state));
    }
  } else {
    spec.sample_sizes.assign(samples, DrawSize(dataset, file_index, &state));
  }
  return spec;
}

std::string DatasetMarkerPath(const DatasetConfig& dataset) {
  return Folder(dataset) + "/" + generator_internal::kMarkerName;
}

Result<GenerateReport> GenerateDataset(const DatasetConfig& dataset, const Format& format,
                                       const FormatOptions& format_options, Storage* storage,
                                       const GenerateOptions& options) {
  const Clock* clock = options.clock != nullptr ? options.clock : SystemClock();
  const int64_t start = clock->NowNanos();
  if (options.world < 1 || options.rank < 0 || options.rank >= options.world) {
    return Status::InvalidArgument("generate: rank ", options.rank, " is not in a world of ",
                                   options.world);
  }
  const bool files = format.uses_files();
  if (files && storage == nullptr) return Status::InvalidArgument("generate: storage is null");
  if (files) DLIO_RETURN_NOT_OK(CheckFilePrefix(dataset.file_prefix));

  // Every rank passes the same collectives in the same order, whatever fails: rank 0 claims the
  // folder, barrier, the others check it, all agree; each writes its files; barrier, all agree;
  // only then does rank 0 release the lock, when no rank writes any more.
  const nlohmann::json params = generator_internal::MarkerParams(dataset, options.seed);
  GenerateReport report;
  generator_internal::FolderClaim claim(storage);
  Status ready;
  if (files && options.rank == 0) {
    ready = generator_internal::ClaimFolder(storage, dataset, format, params, options.force, &claim,
                                            &report.warnings, &report.removed_leftovers);
  }
  if (options.barrier) {
    Status barrier = options.barrier();
    if (ready.ok()) ready = barrier;
  }
  if (files && options.rank != 0 && ready.ok()) {
    ready = generator_internal::CheckFolder(storage, dataset, params, options.force);
  }
  const std::string what = "generating the dataset in " + Folder(dataset);
  if (options.comm != nullptr) ready = format_internal::AgreeAcrossRanks(options.comm, ready, what);
  Status done = ready;
  if (files && done.ok()) {
    done = WriteFiles(dataset, format, format_options, storage, options, &report);
  }
  if (options.barrier) {
    Status barrier = options.barrier();
    if (done.ok()) done = barrier;
  }
  if (options.comm != nullptr) done = format_internal::AgreeAcrossRanks(options.comm, done, what);
  Status released = claim.Release();
  if (done.ok()) done = released;
  DLIO_RETURN_NOT_OK(done);
  report.duration_ns = clock->NowNanos() - start;
  return report;
}

}  // namespace dlio
