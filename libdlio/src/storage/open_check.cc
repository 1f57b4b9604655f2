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

}  // namespace

Status CheckOpenedFile(int fd, const std::string& path, const char* call, bool reading,
                       uint64_t* block_size) {
  const std::string what = std::string(call) + " " + path;
  struct stat st;
  if (::fstat(fd, &st) != 0) return Refuse(fd, Status::FromErrno(errno, "fstat " + path));
  if (S_ISDIR(st.st_mode)) return Refuse(fd, Status::IOError(what + ": Is a directory"));
  if (block_size != nullptr)
    *block_size = st.st_blksize > 0 ? static_cast<uint64_t>(st.st_blksize) : 0;
  if (!reading) return Status::OK();
  if (!S_ISREG(st.st_mode)) return Refuse(fd, NotRegular(path, call, st.st_mode));
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
    return Refuse(fd, Status::FromErrno(errno, "fcntl " + path));
  }
  return Status::OK();
}

Status CheckRegularPath(const std::string& path, const char* call) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return Status::OK();
  return NotRegular(path, call, st.st_mode);
}

}  // namespace dlio
