// WriteFileAtomically: a temporary name, then a rename (dlio/storage.h).
#include <string>
#include <utility>

#include "core/owner_stamp.h"
#include "dlio/storage.h"

namespace dlio {
namespace {

std::string ParentDir(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

Status WriteFileAtomicallyAt(Storage* storage, const std::string& path,
                             const std::function<Status(const std::string& tmp_path)>& write,
                             AtomicSync sync) {
  if (storage == nullptr) return Status::InvalidArgument("writing ", path, ": storage is null");
  const std::string tmp = path + kAtomicTmpInfix + UniqueOwnerToken();
  Status status = write(tmp);
  if (status.ok()) status = storage->Rename(tmp, path);
  if (status.ok() && sync == AtomicSync::kFileAndDir) status = storage->SyncDir(ParentDir(path));
  if (status.ok()) return status;
  // The name is unique to this call, so whatever is at it is this call's.
  auto exists = storage->Exists(tmp);
  if (exists.ok() && *exists) (void)storage->Remove(tmp);  // best effort: `status` matters
  return status.WithContext(StrCat("writing ", path, " (via ", tmp, ")"));
}

Status WriteFileAtomically(Storage* storage, const std::string& path,
                           const std::function<Status(File* file)>& write, AtomicSync sync) {
  return WriteFileAtomicallyAt(
      storage, path,
      [&](const std::string& tmp) -> Status {
        DLIO_ASSIGN_OR_RETURN(auto file, storage->Open(tmp, OpenMode::kCreateNew));
        Status status = write(file.get());
        if (status.ok() && sync != AtomicSync::kNone) status = file->Sync();
        Status closed = file->Close();
        return status.ok() ? closed : status;
      },
      sync);
}

Status WriteFileAtomically(Storage* storage, const std::string& path, std::string_view bytes,
                           AtomicSync sync) {
  return WriteFileAtomically(
      storage, path,
      [bytes](File* file) {
        return bytes.empty() ? Status::OK() : file->WriteAt(0, bytes.data(), bytes.size());
      },
      sync);
}

}  // namespace dlio
