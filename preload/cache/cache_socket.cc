#include "cache_socket.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace dlio::cache_preload {
namespace wire = dlio::cache_wire;
namespace {

void RawClose(int fd) { syscall(SYS_close, fd); }

// Waits until fd is ready for `events` or the deadline passes (ETIMEDOUT).
int WaitFor(int fd, short events, int64_t deadline_ns) {
  for (;;) {
    const int64_t left = deadline_ns - MonotonicNs();
    if (left <= 0) return ETIMEDOUT;
    pollfd p{fd, events, 0};
    timespec ts{static_cast<time_t>(left / 1000000000), static_cast<long>(left % 1000000000)};
    const long r = syscall(SYS_ppoll, &p, 1, &ts, nullptr, 8);
    if (r > 0) return 0;  // ready, or an error/hang-up the next call reports
    if (r < 0 && errno != EINTR) return errno;
  }
}

void Sleep(int64_t ns) {
  timespec ts{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
  syscall(SYS_nanosleep, &ts, nullptr);
}

int SendAllBy(int fd, const void* data, size_t n, int64_t deadline_ns) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const long w = syscall(SYS_sendto, fd, p, n, MSG_DONTWAIT | MSG_NOSIGNAL, nullptr, 0);
    if (w < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) return errno;
      if (const int err = WaitFor(fd, POLLOUT, deadline_ns); err != 0) return err;
      continue;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return 0;
}

}  // namespace

int64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

int ConnectBy(const char* path, int64_t deadline_ns, int* fd) {
  sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  if (std::strlen(path) >= sizeof addr.sun_path) return ENAMETOOLONG;
  std::strcpy(addr.sun_path, path);
  const long s = syscall(SYS_socket, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (s < 0) return errno;
  for (;;) {
    if (syscall(SYS_connect, s, &addr, sizeof addr) == 0) break;
    int err = errno;
    if (err == EINTR) continue;
    if (err == EINPROGRESS) {  // not for AF_UNIX today; waited for all the same
      socklen_t len = sizeof err;
      err = WaitFor(static_cast<int>(s), POLLOUT, deadline_ns);
      if (err == 0 && syscall(SYS_getsockopt, s, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
        err = errno;
      if (err == 0) break;
    } else if (err == EAGAIN && MonotonicNs() < deadline_ns) {  // the listener's backlog is full
      Sleep(5000000);
      continue;
    }
    RawClose(static_cast<int>(s));
    return err == EAGAIN ? ETIMEDOUT : err;
  }
  *fd = static_cast<int>(s);
  return 0;
}

int SendMessageBy(int fd, wire::Op op, const void* a, size_t a_len, const void* b, size_t b_len,
                  int64_t deadline_ns) {
  wire::WireHeader h;
  h.op = static_cast<uint16_t>(op);
  h.payload_bytes = a_len + b_len;
  int err = SendAllBy(fd, &h, sizeof h, deadline_ns);
  if (err == 0 && a_len > 0) err = SendAllBy(fd, a, a_len, deadline_ns);
  if (err == 0 && b_len > 0) err = SendAllBy(fd, b, b_len, deadline_ns);
  return err;
}

// As cache_wire.h's RecvAll: one descriptor, with a message's first byte, and only where it is
// wanted; any other (or control data the kernel truncated) refuses the message (EBADMSG), every
// descriptor closed.
int RecvAllBy(int fd, void* data, size_t n, int64_t deadline_ns, int* received_fd) {
  char* p = static_cast<char*>(data);
  const bool may_take = received_fd != nullptr && *received_fd < 0;
  while (n > 0) {
    iovec iov{p, n};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    const long r = syscall(SYS_recvmsg, fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (r < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) return errno;
      if (const int err = WaitFor(fd, POLLIN, deadline_ns); err != 0) return err;
      continue;
    }
    const bool can_take = may_take && p == static_cast<char*>(data);
    int kept = -1;
    const int fds = wire::TakeDescriptors(&msg, can_take ? &kept : nullptr);
    if (kept >= 0) *received_fd = kept;
    if ((msg.msg_flags & MSG_CTRUNC) != 0 || fds > 1 || (fds == 1 && !can_take)) {
      if (may_take && *received_fd >= 0) RawClose(*received_fd);
      if (may_take) *received_fd = -1;
      return EBADMSG;
    }
    if (r == 0) return ECONNRESET;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return 0;
}

int RecvHeaderBy(int fd, wire::WireHeader* h, int64_t deadline_ns, int* received_fd) {
  if (const int err = RecvAllBy(fd, h, sizeof *h, deadline_ns, received_fd); err != 0) return err;
  if (h->magic != wire::kMagic || h->version != wire::kVersion ||
      h->payload_bytes > kMaxReplyPayload) {
    return EPROTO;
  }
  return 0;
}

}  // namespace dlio::cache_preload
