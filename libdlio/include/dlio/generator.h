// Dataset layout and generation: which files a dataset has, and writing them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dlio/config.h"
#include "dlio/format.h"
#include "dlio/status.h"
#include "dlio/storage.h"

namespace dlio {

enum class Split { kTrain, kEval };

// The file paths of one split, in file-index order, named as DLIO names them:
//   <data_folder>/train/<prefix>_<i>_of_<n>.<ext>   (valid/ for eval)
// With num_subfolders_* = k > 0, file i lives in <split>/<i mod k>/.
// Synthetic formats (no files) get virtual names in the same pattern.
std::vector<std::string> DatasetFiles(const DatasetConfig& dataset, const Format& format,
                                      Split split);

// The sample sizes of file `file_index` of a split: record_length_bytes +- stdev (normal, clipped
// to >= 1), seeded from (seed, split, file_index); one size for the whole file when the format
// cannot hold variable sizes. Deterministic: the same config gives the same sizes on any rank.
FileSpec DatasetFileSpec(const DatasetConfig& dataset, const Format& format, Split split,
                         uint64_t file_index, uint64_t seed);

struct GenerateOptions {
  int rank = 0;     // this rank writes files i with i % world == rank
  int world = 1;
  uint64_t seed = 123;
  // Allow generating into a non-empty folder that holds no dlio dataset marker. Even then no
  // existing file is ever overwritten or deleted.
  bool force = false;
  // Called after each file with (files done by this rank, files this rank writes, bytes so far).
  std::function<void(uint64_t, uint64_t, uint64_t)> progress;
};

struct GenerateReport {
  uint64_t files_written = 0;
  uint64_t files_skipped = 0;  // already present with the expected size (earlier run)
  uint64_t bytes_written = 0;
  int64_t duration_ns = 0;
};

// The marker file that makes a folder "a dlio dataset": <data_folder>/.dlio-dataset.json,
// holding the dataset config it was generated from.
std::string DatasetMarkerPath(const DatasetConfig& dataset);

// Writes this rank's share of the train and eval files. Refuses (AlreadyExists) a non-empty
// data_folder without the marker unless options.force; refuses a marker whose dataset
// parameters differ from `dataset` (FailedPrecondition, naming the differing key). Existing
// files of the expected size are kept (skipped), never rewritten.
Result<GenerateReport> GenerateDataset(const DatasetConfig& dataset, const Format& format,
                                       const FormatOptions& format_options, Storage* storage,
                                       const GenerateOptions& options);

}  // namespace dlio
