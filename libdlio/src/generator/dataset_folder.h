// The data folder of a dataset as generation sees it: the marker that makes it dlio's, the lock
// that keeps a second generation out, and the checks that decide whether dlio may write into it.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dlio/config.h"
#include "dlio/format.h"
#include "dlio/status.h"
#include "dlio/storage.h"

namespace dlio::generator_internal {

inline constexpr char kMarkerName[] = ".dlio-dataset.json";
// Temporary markers are "<kMarkerName>.tmp-<owner token>" (core/owner_stamp.h).
inline constexpr char kMarkerTmpInfix[] = ".tmp-";
inline constexpr char kLockName[] = ".dlio-generate.lock";
// Staging folders are "<parent>/.dlio-tmp-rank<r>-<owner token>" and
// "<parent>/.dlio-tmp-shared-<owner token>".
inline constexpr char kStagingPrefix[] = ".dlio-tmp-";

// data_folder without trailing slashes ("." when empty).
std::string Folder(const DatasetConfig& dataset);

// The parameters that decide what the files hold (what the marker records).
nlohmann::json MarkerParams(const DatasetConfig& dataset, uint64_t seed);

// Rank 0's hold on the data folder for one generation: the lock, held until Release.
// Requires external synchronization.
class FolderClaim {
 public:
  explicit FolderClaim(Storage* storage) : storage_(storage) {}
  ~FolderClaim() { (void)Release(); }
  FolderClaim(const FolderClaim&) = delete;
  FolderClaim& operator=(const FolderClaim&) = delete;

  // Takes the lock file <folder>/.dlio-generate.lock and writes the holder (pid, host) into it.
  // AlreadyExists naming the folder and the holder when another generation holds it; OK without
  // a lock (and a warning) on storages that have none.
  Status Lock(const std::string& folder, std::vector<std::string>* warnings);
  // Removes the lock file and releases the lock. Idempotent.
  Status Release();

 private:
  Storage* storage_;
  std::string path_;
  std::unique_ptr<StorageLock> lock_;
};

// Rank 0: makes the folder this generation's. Refuses a folder whose marker differs from
// `params` (FailedPrecondition naming the key) and a non-empty folder without a marker unless
// `force`; then takes the lock (`claim`), checks again under it and writes the marker when there
// is none. With `force` into a folder without a marker, an entry at a dataset file's name (or a
// companion's, "<name>.<suffix>") is AlreadyExists before anything is written: dlio never adopts
// a file it did not write. Under the lock, temporary markers of dead dlio processes of this host
// are removed (listed in `removed`); other temporary markers are reported in `warnings`.
Status ClaimFolder(Storage* storage, const DatasetConfig& dataset, const Format& format,
                   const nlohmann::json& params, bool force, FolderClaim* claim,
                   std::vector<std::string>* warnings, std::vector<std::string>* removed);

// Other ranks, after rank 0's claim: the folder holds a matching marker (or, on a storage rank 0
// does not share, is empty or forced).
Status CheckFolder(Storage* storage, const DatasetConfig& dataset, const nlohmann::json& params,
                   bool force);

}  // namespace dlio::generator_internal
