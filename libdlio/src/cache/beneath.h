// The folders a cache server may read from (its data directories), and opening a client's path
// beneath one of them as the kernel resolves it, so that no `..`, symbolic link or /proc magic
// link leads a client to a file outside them (docs/caching.md, "Trust model").
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "dlio/cache.h"
#include "dlio/status.h"
#include "dlio/storage.h"

namespace dlio::cache_internal {

class AllowedDirs {
 public:
  // `dirs` must be absolute (InvalidArgument naming `key` and the folder otherwise) and at least
  // one. Each is known by its spelling (without trailing slashes) and, when it exists now, by its
  // real path too, so clients may name files either way.
  static Result<AllowedDirs> Make(const std::vector<std::string>& dirs, const std::string& key);

  // An O_PATH descriptor of the regular file `path` names: `path` must lie, as written, under one
  // of the folders, and the rest of it is resolved beneath that folder's descriptor as the kernel
  // does (openat2 RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS: `..` and symbolic links may move
  // within the folder, never out of it). Where the kernel has no openat2 (before Linux 5.6), a
  // walk of the components with O_NOFOLLOW: `..` within the folder, no symbolic link at all.
  // Errors name `path`: NotFound (no such file), FailedPrecondition (outside the folders, escaping
  // them, or not a regular file).
  Result<OwnedFd> Open(const std::string& path) const;

  // Whether `path` lies, as written, under one of the folders, with no `..` component (no
  // resolution: a filter for paths that are only named, as kFuture lists do, never opened on
  // the strength of it).
  bool Under(const std::string& path) const;

  // The folders as given, for messages.
  const std::vector<std::string>& dirs() const { return dirs_; }

 private:
  struct Root {
    std::string prefix;  // a spelling of the folder, no trailing slash ("" for "/")
    size_t dir = 0;      // index in dirs_
  };
  // The root `path` lies under and the rest of `path` after it (no leading slash); null if none.
  const Root* Match(const std::string& path, std::string* rest) const;

  std::vector<std::string> dirs_;
  std::vector<Root> roots_;
};

// The open of AllowedDirs::Open's fallback, exposed for tests (the kernel under test may have
// openat2): `rest` beneath the folder `dir_fd`, component by component with O_NOFOLLOW. Returns
// an O_PATH descriptor, or -1 with errno set (EXDEV: `..` above the folder; ELOOP: a symbolic
// link).
int OpenBeneathByWalk(int dir_fd, const std::string& rest);

// `source` confined to `dirs` (which it applies as AllowedDirs::Open does): opens for reading,
// sizes and existence of the regular files beneath them; every other call, and every path
// outside, is refused (FailedPrecondition naming the path). The source of a cache that a server
// shares with clients, so neither a client's open nor a prefetch of a kFuture list makes it read
// a file outside its data directories. Reads go to the file resolved (reopened through
// /proc/self/fd), so a path swapped meanwhile cannot redirect them.
std::unique_ptr<Storage> NewConfinedSource(std::unique_ptr<Storage> source, AllowedDirs dirs);

}  // namespace dlio::cache_internal
