#include "storage/open_check.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "core/file_kind.h"

namespace dlio {
namespace {

Status Refuse(int fd, Status status) {
  ::close(fd);
  return status;
}

Status NotRegular(const std::string& path, const char* call, mode_t mode) {
  return Status::IOError(std::string(call) + " " + path + ": not a regular file (" +
                         FileKindName(mode) + "); dlio reads only regular files");
}

// The fstat half of the check: a directory is refused; for reading, anything but a regular file.
Status CheckKind(int fd, const std::string& path, const char* call, bool reading,
                 uint64_t* block_size, uint64_t* size = nullptr) {
  const std::string what = std::string(call) + " " + path;
  struct stat st;
  if (::fstat(fd, &st) != 0) return Refuse(fd, Status::FromErrno(errno, "fstat " + path));
  if (S_ISDIR(st.st_mode)) return Refuse(fd, Status::IOError(what + ": Is a directory"));
  if (block_size != nullptr)
    *block_size = st.st_blksize > 0 ? static_cast<uint64_t>(st.st_blksize) : 0;
  if (size != nullptr) *size = static_cast<uint64_t>(st.st_size);
  if (reading && !S_ISREG(st.st_mode)) return Refuse(fd, NotRegular(path, call, st.st_mode));
  return Status::OK();
}

// F_SETFL changes only the status flags (O_APPEND, O_ASYNC, O_DIRECT, O_NOATIME, O_NONBLOCK) and
// ignores the rest of `flags`.
Status ClearNonblock(int fd, int flags, const std::string& path) {
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    return Refuse(fd, Status::FromErrno(errno, "fcntl " + path));
  }
  return Status::OK();
}

}  // namespace

Status CheckOpenedFile(int fd, const std::string& path, const char* call, bool reading,
                       uint64_t* block_size) {
  DLIO_RETURN_NOT_OK(CheckKind(fd, path, call, reading, block_size));
  return reading ? ClearNonblock(fd, ::fcntl(fd, F_GETFL), path) : Status::OK();
}

namespace storage_internal {

Status CheckOpened(int fd, int open_flags, const std::string& path, const char* call, bool reading,
                   uint64_t* block_size, uint64_t* size) {
  DLIO_RETURN_NOT_OK(CheckKind(fd, path, call, reading, block_size, size));
  return reading ? ClearNonblock(fd, open_flags, path) : Status::OK();
}

}  // namespace storage_internal

Status CheckRegularPath(const std::string& path, const char* call) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return Status::OK();
  return NotRegular(path, call, st.st_mode);
}

}  // namespace dlio
