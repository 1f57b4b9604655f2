// Which files are traced: absolute paths under one of the data-directory prefixes (all paths
// when none is given), never the program's own code (.py, .pyc, .so) or /proc, /sys, /dev.
#pragma once

#include <cstddef>

namespace dlio::preload {

// Configured once by the constructor (and again in a forked child: unchanged), then read-only.
// Stores everything in fixed arrays: no allocation.
class PathFilter {
 public:
  static constexpr size_t kMaxPrefixes = 64;

  // `data_dirs`: colon-separated prefixes, or nullptr/"" for "everything not excluded". A prefix
  // through a symbolic link also covers its target (realpath), as AbsolutePath resolves "..".
  void Configure(const char* data_dirs);
  bool Traced(const char* path, size_t len) const;

 private:
  void AddResolvedPrefixes();

  char storage_[8192] = {};
  char resolved_[8192] = {};
  const char* prefixes_[kMaxPrefixes] = {};
  size_t lengths_[kMaxPrefixes] = {};
  size_t count_ = 0;
};

// Writes the absolute form of `path` (relative to `dirfd`, or the working directory for
// AT_FDCWD) to out[0, cap) NUL-terminated; returns its length, or 0 when it cannot be formed.
// ".." is resolved as the kernel does: the path up to its last ".." goes through realpath (a ".."
// after a symbolic link names the target's parent), and 0 is returned when that part does not
// resolve. "." and repeated slashes are dropped; other symbolic links are kept as written.
size_t AbsolutePath(int dirfd, const char* path, char* out, size_t cap);

}  // namespace dlio::preload
