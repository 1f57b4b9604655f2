#include "profile/import/line_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "dlio/storage.h"

namespace dlio::profile_internal {
namespace {
constexpr size_t kBlock = 1 << 20;
}  // namespace

Result<int> OpenTraceFile(const std::string& path) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer. CheckOpenedFile
  // refuses anything but a regular file (closing fd) and clears O_NONBLOCK again.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno(errno, "open trace " + path);
  DLIO_RETURN_NOT_OK(CheckOpenedFile(fd, path, "open trace", /*reading=*/true));
  return fd;
}

LineReader::~LineReader() {
  if (gz_ != nullptr) gzclose(gz_);
  if (fd_ >= 0) ::close(fd_);
}

Status LineReader::Open(const std::string& path) {
  path_ = path;
  DLIO_ASSIGN_OR_RETURN(const int fd, OpenTraceFile(path));
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

int64_t LineReader::ReadBlock(char* dst, size_t n) {
  if (fd_ >= 0) {
    for (;;) {
      const ssize_t got = ::read(fd_, dst, n);
      if (got >= 0 || errno != EINTR) return got;
    }
  }
  return gzread(gz_, dst, static_cast<unsigned>(n));
}

bool LineReader::Fill() {
  if (pos_ > 0) {  // keep the partial last line, at the front
    std::memmove(buf_.get(), buf_.get() + pos_, len_ - pos_);
    len_ -= pos_;
    scan_ -= pos_;
    pos_ = 0;
  }
  if (buf_ == nullptr) {
    // The partial line holds at most max_line_ bytes (LineTooLong), so the buffer never needs
    // more than that plus a block. Reserved once: only the pages data lands in become resident
    // (a file of short lines touches about two blocks), and no growth ever holds an old and a
    // new copy of a long line at once.
    cap_ = max_line_ + 1 + kBlock;
    buf_ = std::make_unique_for_overwrite<char[]>(cap_);
  }
  const int64_t n = ReadBlock(buf_.get() + len_, std::min(kBlock, cap_ - len_));
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

bool LineReader::LineTooLong() {
  status_ = Status::Corruption("trace ", path_, " line ", line_number_ + 1, ": longer than ",
                               max_line_, " bytes, the most a trace line may hold");
  return false;
}

bool LineReader::Next(std::string_view* line) {
  if ((gz_ == nullptr && fd_ < 0) || !status_.ok()) return false;
  for (;;) {
    // Only the bytes read since the last search: a long line costs one pass, not one per block.
    // (Before the first Fill there is no buffer: memchr must not see a null pointer.)
    const auto* nl =
        len_ > scan_ ? static_cast<const char*>(std::memchr(buf_.get() + scan_, '\n', len_ - scan_))
                     : nullptr;
    const size_t scan_end = nl != nullptr ? static_cast<size_t>(nl - buf_.get()) + 1 : len_;
    bytes_scanned_ += static_cast<int64_t>(scan_end - scan_);
    scan_ = scan_end;
    if (nl != nullptr) {
      const char* begin = buf_.get() + pos_;
      if (static_cast<size_t>(nl - begin) > max_line_) return LineTooLong();
      const char* end = nl;
      if (end > begin && end[-1] == '\r') --end;
      *line = std::string_view(begin, static_cast<size_t>(end - begin));
      pos_ = scan_;
      ++line_number_;
      return true;
    }
    if (len_ - pos_ > max_line_) return LineTooLong();
    if (eof_ || !Fill()) {
      if (!status_.ok() || pos_ >= len_) return false;
      *line = std::string_view(buf_.get() + pos_, len_ - pos_);  // last line without "\n"
      pos_ = scan_ = len_;
      ++line_number_;
      return true;
    }
  }
}

}  // namespace dlio::profile_internal
