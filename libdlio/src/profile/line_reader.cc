#include "profile/line_reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace dlio::profile_internal {
namespace {
constexpr size_t kBlock = 1 << 20;
}  // namespace

LineReader::~LineReader() {
  if (gz_ != nullptr) gzclose(gz_);
  if (fd_ >= 0) ::close(fd_);
}

Status LineReader::Open(const std::string& path) {
  path_ = path;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno(errno, "open trace " + path);
  unsigned char magic[2] = {0, 0};
  const ssize_t n = ::pread(fd, magic, 2, 0);
  if (n < 0) {
    const int err = errno;
    ::close(fd);
    return Status::FromErrno(err, "read trace " + path);
  }
  if (n < 2 || magic[0] != 0x1f || magic[1] != 0x8b) {
    fd_ = fd;  // not gzip: plain text
    return Status::OK();
  }
  gz_ = gzdopen(fd, "rb");
  if (gz_ == nullptr) {
    ::close(fd);
    return Status::ResourceExhausted("gzdopen trace " + path);
  }
  gzbuffer(gz_, kBlock);
  return Status::OK();
}

int64_t LineReader::ReadBlock(char* dst) {
  if (fd_ >= 0) {
    for (;;) {
      const ssize_t n = ::read(fd_, dst, kBlock);
      if (n >= 0 || errno != EINTR) return n;
    }
  }
  return gzread(gz_, dst, static_cast<unsigned>(kBlock));
}

bool LineReader::Fill() {
  buf_.erase(0, pos_);
  pos_ = 0;
  const size_t old = buf_.size();
  buf_.resize(old + kBlock);
  const int64_t n = ReadBlock(buf_.data() + old);
  if (n < 0) {
    int errnum = Z_ERRNO;
    const char* msg = gz_ != nullptr ? gzerror(gz_, &errnum) : "";
    status_ = Status::Corruption("read trace ", path_, " after line ", line_number_, ": ",
                                 errnum == Z_ERRNO ? std::strerror(errno) : msg);
    buf_.resize(old);
    return false;
  }
  buf_.resize(old + static_cast<size_t>(n));
  if (n == 0) eof_ = true;
  return n > 0;
}

bool LineReader::Next(std::string_view* line) {
  if ((gz_ == nullptr && fd_ < 0) || !status_.ok()) return false;
  for (;;) {
    const size_t nl = buf_.find('\n', pos_);
    if (nl != std::string::npos) {
      size_t end = nl;
      if (end > pos_ && buf_[end - 1] == '\r') --end;
      *line = std::string_view(buf_).substr(pos_, end - pos_);
      pos_ = nl + 1;
      ++line_number_;
      return true;
    }
    if (eof_ || !Fill()) {
      if (!status_.ok() || pos_ >= buf_.size()) return false;
      *line = std::string_view(buf_).substr(pos_);  // last line without "\n"
      pos_ = buf_.size();
      ++line_number_;
      return true;
    }
  }
}

}  // namespace dlio::profile_internal
