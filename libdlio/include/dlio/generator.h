// Dataset layout and generation: which files a dataset has, and writing them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dlio/clock.h"
#include "dlio/comm.h"
#include "dlio/config.h"
#include "dlio/format.h"
#include "dlio/status.h"
#include "dlio/storage.h"

namespace dlio {

enum class Split { kTrain, kEval };

// The file paths of one split, in file-index order, named as DLIO names them:
//   <data_folder>/train/<prefix>_<i>_of_<n>.<ext>   (valid/ for eval)
// i counts from 0 and is zero-padded to the digits of n ("img_007_of_168.npz"), as DLIO's
// add_padding does. With num_subfolders_* = k > 1 (DLIO ignores k = 1), file i lives in
// <split>/<i mod k, zero-padded to the digits of k>/. Trailing slashes of data_folder are dropped.
// Synthetic formats (no files) get virtual names in the same pattern (no ".<ext>").
std::vector<std::string> DatasetFiles(const DatasetConfig& dataset, const Format& format,
                                      Split split);

// The file paths a run reads for one split, found as the Python DLIO finds them: the entries of
// <data_folder>/train/ (valid/ for eval) or, with num_subfolders_* > 1, of its subfolders, whose
// names end with "." and one of format.read_extensions() (hdf5: .hdf5 or .h5), not hidden ("."),
// not a companion of another (Format::CompanionFiles under `options`), sorted by name (base name
// with subfolders), the first num_files_* of them. So a run may use a subset of a larger dataset,
// and stray files are ignored. NotFound naming the folder and the key when fewer are present.
// Formats without files, a split of 0 files and storages whose List is Unimplemented get
// DatasetFiles. Every rank lists the same folder, so all ranks agree on the list.
Result<std::vector<std::string>> ListDatasetFiles(const DatasetConfig& dataset,
                                                  const Format& format,
                                                  const FormatOptions& options, Split split,
                                                  Storage* storage);

// The sample sizes of file `file_index` of a split: record_length_bytes +- stdev (normal, clipped
// to >= 1), seeded from (seed, split, file_index); one size for the whole file when the format
// cannot hold variable sizes. Deterministic: the same config gives the same sizes on any rank.
FileSpec DatasetFileSpec(const DatasetConfig& dataset, const Format& format, Split split,
                         uint64_t file_index, uint64_t seed);

struct GenerateOptions {
  int rank = 0;  // this rank writes files i with i % world == rank
  int world = 1;
  uint64_t seed = 123;
  // Allow generating into a non-empty folder that holds no dlio dataset marker. Even then no
  // existing file is ever adopted, overwritten or deleted: an entry at a dataset file's name is
  // refused before anything is written.
  bool force = false;
  // Called after each file with (files done by this rank, files this rank writes, bytes so far).
  std::function<void(uint64_t, uint64_t, uint64_t)> progress;
  // Multi-rank runs: a barrier over all ranks (e.g. [&] { return comm->Barrier(); }). With it, rank
  // 0 claims the folder (lock, check, marker) before the first barrier and the other ranks check
  // after it, so no rank mistakes rank 0's fresh files for foreign data; the second barrier, after
  // every rank's files, keeps rank 0's generation lock until no rank writes any more. Every rank
  // calls it exactly twice, even when its own part failed. Without it (serial runs), each rank
  // checks on its own and rank 0 must finish before the others start.
  std::function<Status()> barrier;
  // All ranks (with world > 1): ranks agree on errors (after the folder check and at the end, so
  // a failure anywhere fails every rank; the others get Cancelled), and a split of one file is
  // written by every rank together when the format can (Format::CanWriteShared: npy,
  // indexed_binary, uncompressed hdf5), staged in "<parent>/.dlio-tmp-shared-<id>/" and renamed
  // by rank 0, which alone counts it in its report. Without it, or for other formats, rank 0
  // writes such a file alone.
  Comm* comm = nullptr;
  // Times the generation (GenerateReport::duration_ns); SystemClock() when null. Not owned.
  const Clock* clock = SystemClock();
};

struct GenerateReport {
  uint64_t files_written = 0;
  uint64_t files_skipped = 0;  // already present and complete (an earlier run's)
  uint64_t bytes_written = 0;
  int64_t duration_ns = 0;
  // Rank 0: what the user should know but did not stop generation (leftovers of interrupted
  // runs that were left alone, a storage without a generation lock).
  std::vector<std::string> warnings;
  // Leftovers of dead dlio processes of this host that this rank removed: staging folders and
  // temporary markers of killed generations (docs/architecture.md, "Dataset generation").
  std::vector<std::string> removed_leftovers;
  // The dataset files this rank wrote in this run (a shared one-file split: rank 0 lists it),
  // each written with its companions (Format::CompanionFiles). Files already present are not
  // listed. What dataset.keep_files: false removes at the end of the run.
  std::vector<std::string> created_files;
};

// The marker file that makes a folder "a dlio dataset": <data_folder>/.dlio-dataset.json,
// holding the dataset config it was generated from.
std::string DatasetMarkerPath(const DatasetConfig& dataset);

// Writes this rank's share of the train and eval files. What a kill at any point leaves and what
// a rerun does: docs/architecture.md, "Dataset generation".
// - Refuses (InvalidArgument) a dataset.file_prefix that is not a plain file-name part (a '/', or
//   starting with ".dlio-").
// - Refuses (AlreadyExists) a non-empty data_folder without the marker unless options.force, and
//   a marker whose dataset parameters differ from `dataset` (FailedPrecondition, naming the
//   differing key, e.g. "dataset.record_length_bytes: existing dataset in ./data has 1024, config
//   asks 2048; ...").
// - Rank 0 holds <data_folder>/.dlio-generate.lock (Storage::TryLock; it records the holder's pid
//   and host) for the whole generation; a second generation of the same folder meanwhile fails
//   with AlreadyExists naming the folder and the holder. It then writes the marker (unique
//   temporary name, created new, then renamed) before any data file, also into a forced folder.
// - Each file is written by format.Write into a staging folder this run creates beside it,
//   "<parent>/.dlio-tmp-rank<r>-<id>/<name>", and every entry written there (the file and
//   companions such as "<name>.idx") is renamed into <parent>: companions first, the file itself
//   last, so a file under its final name is complete with its companions. A companion under its
//   final name without its file (a kill between the renames) is replaced. Staging folders are
//   removed at the end (and on failure); only files this run created are ever removed.
// - Existing files are kept (skipped), never rewritten, when complete: at least the payload for
//   formats storing exact sample sizes uncompressed; else the file opens with the format's reader
//   and holds num_samples_per_file samples. Anything else at a file's name (an incomplete file, a
//   dangling symbolic link) is AlreadyExists naming it.
// Formats without files: nothing is written, OK.
Result<GenerateReport> GenerateDataset(const DatasetConfig& dataset, const Format& format,
                                       const FormatOptions& format_options, Storage* storage,
                                       const GenerateOptions& options);

}  // namespace dlio
