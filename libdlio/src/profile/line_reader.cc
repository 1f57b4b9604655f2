#include "profile/line_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
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
  struct stat st;
  if (::fstat(fd, &st) == 0) file_size_ = st.st_size;
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
  if (pos_ > 0) {  // keep the partial last line, at the front
    std::memmove(buf_.get(), buf_.get() + pos_, len_ - pos_);
    len_ -= pos_;
    pos_ = 0;
  }
  if (cap_ - len_ < kBlock) {
    const size_t cap = std::max(2 * cap_, len_ + kBlock);
    auto bigger = std::make_unique_for_overwrite<char[]>(cap);
    if (len_ > 0) std::memcpy(bigger.get(), buf_.get(), len_);
    buf_ = std::move(bigger);
    cap_ = cap;
  }
  const int64_t n = ReadBlock(buf_.get() + len_);
  if (n < 0) {
    int errnum = Z_ERRNO;
    const char* msg = gz_ != nullptr ? gzerror(gz_, &errnum) : "";
    status_ = Status::Corruption("read trace ", path_, " after line ", line_number_, ": ",
                                 errnum == Z_ERRNO ? std::strerror(errno) : msg);
    return false;
  }
  len_ += static_cast<size_t>(n);
  if (n == 0) eof_ = true;
  return n > 0;
}

bool LineReader::Next(std::string_view* line) {
  if ((gz_ == nullptr && fd_ < 0) || !status_.ok()) return false;
  for (;;) {
    const char* begin = buf_.get() + pos_;
    // (Before the first Fill there is no buffer: memchr must not see a null pointer.)
    const auto* nl =
        len_ > pos_ ? static_cast<const char*>(std::memchr(begin, '\n', len_ - pos_)) : nullptr;
    if (nl != nullptr) {
      const char* end = nl;
      if (end > begin && end[-1] == '\r') --end;
      *line = std::string_view(begin, static_cast<size_t>(end - begin));
      pos_ = static_cast<size_t>(nl - buf_.get()) + 1;
      ++line_number_;
      return true;
    }
    if (eof_ || !Fill()) {
      if (!status_.ok() || pos_ >= len_) return false;
      *line = std::string_view(buf_.get() + pos_, len_ - pos_);  // last line without "\n"
      pos_ = len_;
      ++line_number_;
      return true;
    }
  }
}

}  // namespace dlio::profile_internal
