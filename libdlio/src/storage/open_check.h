// The errors and the check the file-system backends (posix, stdio) make right after open(2): a path
// opened for reading must be a regular file. Opening a FIFO for reading blocks until a writer
// appears, so those backends open for reading with O_NONBLOCK and this check clears it again once
// the file is known to be regular (O_DIRECT and the other status flags are kept).
#pragma once

#include <cerrno>
#include <string>

#include "dlio/status.h"

namespace dlio::storage_internal {

// "<op> <path>: <the error's text>", from errno unless `err` is given.
inline Status Errno(const char* op, const std::string& path, int err = errno) {
  return Status::FromErrno(err, std::string(op) + " " + path);
}

// Checks the just-opened `fd` of `path`: a directory is refused whatever the mode, and with
// `reading` anything but a regular file (FIFO, socket, character or block device) is refused
// ("open <path>: not a regular file (a FIFO)"). On success with `reading`, clears O_NONBLOCK.
// On error, closes `fd`. `call` names the operation in messages ("open", "fopen").
Status CheckOpenedFile(int fd, const std::string& path, const char* call, bool reading);

// The same refusal by path, for when open(2) itself failed (O_DIRECT on a FIFO is EINVAL): an
// error when `path` exists and is not a regular file, OK otherwise.
Status CheckRegularPath(const std::string& path, const char* call);

}  // namespace dlio::storage_internal
