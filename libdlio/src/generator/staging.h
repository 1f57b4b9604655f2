// Writing dataset files through staging folders, so that a file under its final name is always
// complete, with its companions (see docs/architecture.md, "Dataset generation").
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "dlio/format.h"
#include "dlio/status.h"
#include "dlio/storage.h"

namespace dlio::generator_internal {

// The entries of directories, listed once each. Unlike Storage::Exists, an entry is seen whatever
// it is (a dangling symbolic link too), so no name is taken for free when it is not. Valid while
// no one else adds the names asked about: each dataset file (and its companions) has one writer.
// Requires external synchronization.
class DirIndex {
 public:
  explicit DirIndex(Storage* storage) : storage_(storage) {}
  // Whether `dir` has an entry `name` (false when `dir` does not exist).
  Result<bool> Has(const std::string& dir, const std::string& name);
  // Paths of the entries whose names start with `prefix`, in the directories listed so far.
  std::vector<std::string> Matching(const std::string& prefix) const;
  // Forgets the entry `name` of the listed `dir` (after removing it).
  void Erase(const std::string& dir, const std::string& name);

 private:
  Storage* storage_;
  std::map<std::string, std::vector<std::string>> listed_;  // dir -> sorted names
};

// Whether the existing `path` is a complete file of this dataset, to keep it: OK, or
// AlreadyExists naming it. Formats that store exactly the requested bytes, uncompressed: at least
// the payload. Others (jpeg/png/csv, whose files are an encoding of the samples, and compressed
// files): the format's reader opens it and counts the expected number of samples.
Status CheckComplete(Storage* storage, const Format& format, const FormatOptions& options,
                     const std::string& path, const FileSpec& spec, bool compressed);

// Renames what one write left in `staged_dir` (the file `base` and its companions) into
// `parent`, where `base` is absent (the caller asked `index`): companions first, the file last, so
// the file under its final name means the unit is complete. A companion found at its final name is
// an orphan of an interrupted run (the file itself is missing, or it would not be written; the
// folder is dlio's) and is replaced when it is a regular file; any other entry in the way is
// AlreadyExists, left alone.
Status MoveUnit(Storage* storage, DirIndex* index, const Format& format,
                const std::string& staged_dir, const std::string& parent, const std::string& base);

// Per-rank staging: each file goes through "<parent>/.dlio-tmp-rank<r>-<token>/", a folder this
// run creates (its name is unique), so everything in it is this run's and nothing else is ever
// removed from it. Requires external synchronization.
class Staging {
 public:
  Staging(Storage* storage, DirIndex* index, int rank, const std::string& token);
  // After a failure: removes the files this run left in its staging folders, then the folders.
  ~Staging();
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;

  // Writes `path` (absent) with format.Write into the staging folder beside it, then MoveUnit.
  Status Write(const Format& format, const FormatOptions& options, const FileSpec& spec,
               const std::string& path);
  // Removes the (now empty) staging folders.
  Status Finish();

 private:
  Storage* storage_;
  DirIndex* index_;
  std::string name_;
  std::set<std::string> dirs_;  // created by this run
};

// Removes the files in `dir`, a staging folder this run created, then the folder. Best effort.
void RemoveStagingDir(Storage* storage, const std::string& dir);

// Removes the staging folders that dead dlio processes of this host left in the directories
// `index` listed: "<kStagingPrefix>rank<r>-<token>" or "<kStagingPrefix>shared-<token>" whose
// owner token names a process that has ended (core/owner_stamp.h). Only regular files directly
// in such a folder are removed, then the folder when that leaves it empty. Returns the folders
// removed.
std::vector<std::string> RemoveDeadStaging(Storage* storage, DirIndex* index);

// "<parent>", "<base>" of a path ("." when it has no slash).
std::string ParentOf(const std::string& path);
std::string BaseOf(const std::string& path);

}  // namespace dlio::generator_internal
