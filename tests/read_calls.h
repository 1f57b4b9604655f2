// The read system calls this thread has made, from /proc/thread-self/io (syscr): how a test tells
// that a request cost exactly the read(2) / pread calls it should (storage's ReadSomeAt, the
// Python models' buffer fills).
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <string>

namespace dlio::testing {

class ReadCalls {
 public:
  ReadCalls() : fd_(::open("/proc/thread-self/io", O_RDONLY)) {}
  ~ReadCalls() {
    if (fd_ >= 0) ::close(fd_);
  }
  ReadCalls(const ReadCalls&) = delete;
  ReadCalls& operator=(const ReadCalls&) = delete;

  // Whether the kernel counts them here.
  bool available() { return fd_ >= 0 && Now() >= 0; }
  // The count so far (-1 when not counted). Each call costs one pread of its own.
  int64_t Now() {
    char buf[512] = {};
    if (fd_ < 0 || ::pread(fd_, buf, sizeof(buf) - 1, 0) <= 0) return -1;
    const std::string s(buf);
    const size_t at = s.find("syscr: ");
    return at == std::string::npos ? -1 : std::stoll(s.substr(at + 7));
  }
  // Read calls since `before` (a Now()), without this call's own; -1 when not counted.
  int64_t Since(int64_t before) {
    const int64_t now = Now();
    return before < 0 || now < 0 ? -1 : now - before - 1;
  }

 private:
  int fd_;
};

}  // namespace dlio::testing
