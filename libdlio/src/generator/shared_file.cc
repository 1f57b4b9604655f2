// The shared one-file write (see shared_file.h).
#include "generator/shared_file.h"

#include "dlio/comm.h"
#include "format/io_util.h"
#include "generator/dataset_folder.h"

namespace dlio::generator_internal {
namespace {

// Rank 0: "" when an earlier run wrote the file, else the staging folder it created.
Result<std::string> PrepareShared(Storage* storage, DirIndex* index, const Format& format,
                                  const FormatOptions& options, const FileSpec& spec,
                                  const std::string& path, bool compressed,
                                  const std::string& token) {
  const std::string parent = ParentOf(path);
  DLIO_ASSIGN_OR_RETURN(bool present, index->Has(parent, BaseOf(path)));
  if (present) {
    DLIO_RETURN_NOT_OK(CheckComplete(storage, format, options, path, spec, compressed));
    return std::string();
  }
  const std::string dir = parent + "/" + kStagingPrefix + "shared-" + token;
  DLIO_ASSIGN_OR_RETURN(bool exists, storage->Exists(dir));
  if (exists) {
    return Status::AlreadyExists("staging folder " + dir +
                                 " exists before this run created it; it is left alone");
  }
  DLIO_RETURN_NOT_OK(storage->CreateDirs(dir));
  return dir;
}

}  // namespace

Status WriteSharedFile(Storage* storage, DirIndex* index, const Format& format,
                       const FormatOptions& options, const FileSpec& spec, const std::string& path,
                       bool compressed, const SharedWrite& shared, const std::string& token,
                       bool* written) {
  *written = false;
  std::string dir;  // rank 0 decides; "" = keep the existing file
  Status mine;
  if (shared.rank == 0) {
    auto prepared = PrepareShared(storage, index, format, options, spec, path, compressed, token);
    if (prepared.ok()) dir = *prepared;
    mine = prepared.status();
  }
  DLIO_RETURN_NOT_OK(
      format_internal::AgreeAcrossRanks(shared.comm, mine, "preparing shared file " + path));
  DLIO_RETURN_NOT_OK(shared.comm->Broadcast(&dir, 0));
  if (dir.empty()) return Status::OK();
  const std::string base = BaseOf(path);
  Status st = format.WriteShared(storage, dir + "/" + base, spec, options, shared);
  if (shared.rank == 0) {
    if (st.ok()) st = MoveUnit(storage, index, format, dir, ParentOf(path), base);
    if (st.ok()) {
      *written = true;
      st = storage->RemoveEmptyDir(dir);
    } else {
      RemoveStagingDir(storage, dir);  // this run created it: everything in it is ours
    }
  }
  return format_internal::AgreeAcrossRanks(shared.comm, st.WithContext("generating " + path),
                                           "generating " + path);
}

}  // namespace dlio::generator_internal
