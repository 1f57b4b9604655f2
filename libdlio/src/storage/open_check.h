// The errors and the check the file-system backends (posix, stdio) make right after open(2): a path
// opened for reading must be a regular file. Opening a FIFO for reading blocks until a writer
// appears, so those backends open for reading with O_NONBLOCK and this check clears it again once
// the file is known to be regular (O_DIRECT and the other status flags are kept).
#pragma once

#include <cerrno>
#include <string>

#include "dlio/status.h"
#include "dlio/storage.h"

namespace dlio::storage_internal {

// "<op> <path>: <the error's text>", from errno unless `err` is given.
inline Status Errno(const char* op, const std::string& path, int err = errno) {
  return Status::FromErrno(err, std::string(op) + " " + path);
}

// CheckOpenedFile and CheckRegularPath are public (dlio/storage.h): the profile and report modules
// open trace and summary files with the same refusal.
using ::dlio::CheckOpenedFile;
using ::dlio::CheckRegularPath;

// CheckOpenedFile for a descriptor the caller opened with `open_flags` (O_NONBLOCK among them when
// `reading`): O_NONBLOCK is cleared with one fcntl(F_SETFL) of those flags, without asking the
// kernel for them first (F_GETFL), one system call less per open. `size`, when given, gets the
// file's size as that fstat found it.
Status CheckOpened(int fd, int open_flags, const std::string& path, const char* call, bool reading,
                   uint64_t* block_size, uint64_t* size = nullptr);

}  // namespace dlio::storage_internal
