#include "config/config_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "core/file_kind.h"
#include "dlio/config.h"

namespace dlio::config_internal {
namespace {

std::string TooLarge(const std::string& path, const std::string& size) {
  return StrCat("config file '", path, "' holds ", size, " bytes, more than the ",
                kMaxConfigFileBytes, " a config may have");
}

// Closes the descriptor whatever happens.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

Result<std::string> ReadConfigFile(const std::string& path) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
  Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) {
    const int err = errno;
    if (err == ENOENT) return Status::NotFound("config file '" + path + "' does not exist");
    return Status::FromErrno(err, "config file '" + path + "'");
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Status::FromErrno(errno, "config file '" + path + "'");
  if (!S_ISREG(st.st_mode)) {
    return Status::InvalidArgument("config file '" + path + "' is " + FileKindName(st.st_mode) +
                                   ", not a regular file: dlio reads a config only from a "
                                   "regular file");
  }
  if (static_cast<uint64_t>(st.st_size) > kMaxConfigFileBytes) {
    return Status::InvalidArgument(TooLarge(path, std::to_string(st.st_size)));
  }
  // Read at most one byte more than allowed, in case the file grew since fstat. The buffer starts
  // at the file's size (plus the byte that detects growth) and doubles only if the file grew: a
  // buffer of the largest allowed size would be allocated and freed by every run, and freeing a
  // block that large raises glibc's mmap and trim thresholds for the rest of the process, which
  // changes where the emulated Python reads land (docs/io_models.md, "glibc's thresholds").
  const size_t limit = static_cast<size_t>(kMaxConfigFileBytes) + 1;
  std::string text(static_cast<size_t>(st.st_size) + 1, '\0');
  size_t got = 0;
  while (got < limit) {
    if (got == text.size()) text.resize(std::min(limit, 2 * text.size()));
    const ssize_t n = ::read(fd.get(), text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::FromErrno(errno, "reading config file '" + path + "'");
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  if (got > kMaxConfigFileBytes) return Status::InvalidArgument(TooLarge(path, "more than that"));
  text.resize(got);
  return text;
}

}  // namespace dlio::config_internal
