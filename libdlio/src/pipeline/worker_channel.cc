#include "pipeline/worker_channel.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace dlio::pipeline_internal {

SharedRegion::~SharedRegion() { Close(); }

void SharedRegion::Close() {
  if (data_ != nullptr) ::munmap(data_, mapped_);
  if (fd_ >= 0) ::close(fd_);
  data_ = nullptr;
  mapped_ = 0;
  fd_ = -1;
}

Status SharedRegion::Create(const std::string& name) {
  name_ = name;
  fd_ = ::memfd_create(name.c_str(), MFD_CLOEXEC);
  if (fd_ < 0) return Status::FromErrno(errno, "memfd_create " + name);
  return Status::OK();
}

Status SharedRegion::MapSize(uint64_t bytes) {
  if (data_ != nullptr) ::munmap(data_, mapped_);
  data_ = nullptr;
  mapped_ = 0;
  if (bytes == 0) return Status::OK();
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (p == MAP_FAILED) return Status::FromErrno(errno, "mmap shared region " + name_);
  data_ = static_cast<uint8_t*>(p);
  mapped_ = bytes;
  return Status::OK();
}

Status SharedRegion::Refresh() {
  struct stat st;
  if (::fstat(fd_, &st) != 0) return Status::FromErrno(errno, "fstat shared region " + name_);
  const auto size = static_cast<uint64_t>(st.st_size);
  return size == mapped_ ? Status::OK() : MapSize(size);
}

Status SharedRegion::Reserve(uint64_t bytes) {
  DLIO_RETURN_NOT_OK(Refresh());
  if (bytes <= mapped_) return Status::OK();
  uint64_t size = 1 << 16;
  while (size < bytes) size *= 2;
  if (::ftruncate(fd_, static_cast<off_t>(size)) != 0) {
    return Status::FromErrno(
        errno, "growing shared region " + name_ + " to " + std::to_string(size) + " bytes");
  }
  return MapSize(size);
}

Status SharedRegion::Prefault(uint64_t bytes) {
  DLIO_RETURN_NOT_OK(Refresh());
  if (bytes == 0) return Status::OK();
  // Mode 0 extends the file when `bytes` is beyond its end.
  if (::fallocate(fd_, 0, 0, static_cast<off_t>(bytes)) != 0) {
    return Status::FromErrno(
        errno, "allocating " + std::to_string(bytes) + " bytes of shared region " + name_);
  }
  return Refresh();
}

Status SharedRegion::Populate() {
  if (data_ == nullptr || mapped_ == 0) return Status::OK();
  if (::madvise(data_, mapped_, MADV_POPULATE_WRITE) != 0 && errno != EINVAL) {
    return Status::FromErrno(errno, "populating shared region " + name_);
  }
  return Status::OK();
}

Status WriteFull(int fd, const void* data, size_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
  while (size > 0) {
    const ssize_t n = ::send(fd, p, size, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::FromErrno(errno, "pipeline 'pytorch': writing to a worker channel");
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
  return Status::OK();
}

Status ReadFull(int fd, void* data, size_t size) {
  auto* p = static_cast<uint8_t*>(data);
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::recv(fd, p + done, size - done, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::FromErrno(errno, "pipeline 'pytorch': reading a worker channel");
    }
    if (n == 0) {
      return done == 0 ? Status::OutOfRange("worker channel closed")
                       : Status::IOError("pipeline 'pytorch': worker channel closed mid-message");
    }
    done += static_cast<size_t>(n);
  }
  return Status::OK();
}

}  // namespace dlio::pipeline_internal
