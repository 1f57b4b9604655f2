#include "fd_hooks.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>

#include "private_fd.h"
#include "real.h"

#define DLIO_FD_HOOK extern "C" __attribute__((visibility("default")))

namespace dlio::preload::fd_hooks {
namespace {

constexpr unsigned kLastFollowed = (1u << 16) - 1;  // RefTable::kMaxFds - 1

// The table changes keep the call's errno.
void Forgotten(int fd) {
  if (fd < 0) return;
  const int err = errno;
  Forget(fd);
  errno = err;
}

int Copied(int old_fd, int new_fd) {
  if (new_fd >= 0 && new_fd != old_fd) {
    const int err = errno;
    Copy(old_fd, new_fd);
    errno = err;
  }
  return new_fd;
}

int Made(int fd) {
  Forgotten(fd);
  return fd;
}

int MadePair(int r, const int fds[2]) {
  if (r == 0) {
    Forgotten(fds[0]);
    Forgotten(fds[1]);
  }
  return r;
}

void ForgetRange(unsigned first, unsigned last) {
  const int err = errno;
  for (unsigned fd = first; fd <= last && fd <= kLastFollowed; ++fd) Forget(static_cast<int>(fd));
  errno = err;
}

int Ebadf() {
  errno = EBADF;
  return -1;
}

bool Ours(int fd) { return PrivateFd::Get().Is(fd); }

// (A function, not a test in the hooks: libc declares these pointers nonnull, yet a program may
// pass NULL.)
bool Given(const void* p) { return p != nullptr; }

int CloseRange(unsigned first, unsigned last, int flags) {
  const int r = CloseRangeAround(first, last, flags, DLIO_REAL(close_range), PrivateFd::Get());
  if (r == 0 && (flags & CLOSE_RANGE_CLOEXEC) == 0) ForgetRange(first, last);
  return r;
}

// freopen closes (or reuses) the stream's descriptor inside libc.
template <typename Call>
FILE* Reopened(FILE* f, Call call) {
  if (Given(f)) Forgotten(fileno(f));
  FILE* r = call();
  if (r != nullptr) Forgotten(fileno(r));
  return r;
}

template <typename Next>
int Fcntl(int fd, int cmd, void* arg, Next next) {
  if (Ours(fd)) return Ebadf();
  const int r = next(fd, cmd, arg);
  if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) return Copied(fd, r);
  if (cmd == F_SETFL) {
    const int err = errno;
    FlagsChanged(fd);
    errno = err;
  }
  return r;
}

}  // namespace
}  // namespace dlio::preload::fd_hooks

namespace fh = dlio::preload::fd_hooks;

DLIO_FD_HOOK int dup(int fd) {
  if (fh::Ours(fd)) return fh::Ebadf();
  return fh::Copied(fd, DLIO_REAL(dup)(fd));
}

// Onto our number: ours moves away first, so the program gets the number it asked for.
DLIO_FD_HOOK int dup2(int fd, int new_fd) {
  if (fh::Ours(fd)) return fh::Ebadf();
  if (fd != new_fd) dlio::preload::PrivateFd::Get().Vacate(new_fd);
  return fh::Copied(fd, DLIO_REAL(dup2)(fd, new_fd));
}

DLIO_FD_HOOK int dup3(int fd, int new_fd, int flags) {
  if (fh::Ours(fd)) return fh::Ebadf();
  if (fd != new_fd) dlio::preload::PrivateFd::Get().Vacate(new_fd);
  return fh::Copied(fd, DLIO_REAL(dup3)(fd, new_fd, flags));
}

// fcntl's third argument is an int, a long or a pointer: passed on as a pointer-sized value.
DLIO_FD_HOOK int fcntl(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  return fh::Fcntl(fd, cmd, arg, DLIO_REAL(fcntl));
}

DLIO_FD_HOOK int fcntl64(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  return fh::Fcntl(fd, cmd, arg, DLIO_REAL(fcntl64));
}

DLIO_FD_HOOK int close_range(unsigned first, unsigned last, int flags) {
  return fh::CloseRange(first, last, flags);
}

// glibc's closefrom calls its internal close_range, past the hook above: it is done here with
// the next close_range (or, on kernels without one, by closing what /proc/self/fd lists).
DLIO_FD_HOOK void closefrom(int lowfd) {
  const unsigned first = lowfd < 0 ? 0u : static_cast<unsigned>(lowfd);
  if (fh::CloseRange(first, ~0u, 0) == 0) return;
  dlio::preload::CloseFromBySearch(static_cast<int>(first), DLIO_REAL(close),
                                   dlio::preload::PrivateFd::Get());
  fh::ForgetRange(first, ~0u);
}

// Calls that close or replace a descriptor inside libc, past the close hooks.
DLIO_FD_HOOK int closedir(DIR* dir) {
  if (fh::Given(dir)) fh::Forgotten(dirfd(dir));
  return DLIO_REAL(closedir)(dir);
}

DLIO_FD_HOOK FILE* freopen(const char* path, const char* mode, FILE* f) {
  return fh::Reopened(f, [&] { return DLIO_REAL(freopen)(path, mode, f); });
}

DLIO_FD_HOOK FILE* freopen64(const char* path, const char* mode, FILE* f) {
  return fh::Reopened(f, [&] { return DLIO_REAL(freopen64)(path, mode, f); });
}

// Calls that make descriptors without an open of a path: the number names something new.
DLIO_FD_HOOK DIR* opendir(const char* name) {
  DIR* d = DLIO_REAL(opendir)(name);
  if (d != nullptr) fh::Forgotten(dirfd(d));
  return d;
}

DLIO_FD_HOOK int pipe(int fds[2]) { return fh::MadePair(DLIO_REAL(pipe)(fds), fds); }

DLIO_FD_HOOK int pipe2(int fds[2], int flags) {
  return fh::MadePair(DLIO_REAL(pipe2)(fds, flags), fds);
}

DLIO_FD_HOOK int socket(int domain, int type, int protocol) {
  return fh::Made(DLIO_REAL(socket)(domain, type, protocol));
}

DLIO_FD_HOOK int socketpair(int domain, int type, int protocol, int fds[2]) {
  return fh::MadePair(DLIO_REAL(socketpair)(domain, type, protocol, fds), fds);
}

DLIO_FD_HOOK int accept(int fd, sockaddr* addr, socklen_t* len) {
  return fh::Made(DLIO_REAL(accept)(fd, addr, len));
}

DLIO_FD_HOOK int accept4(int fd, sockaddr* addr, socklen_t* len, int flags) {
  return fh::Made(DLIO_REAL(accept4)(fd, addr, len, flags));
}

DLIO_FD_HOOK int eventfd(unsigned value, int flags) {
  return fh::Made(DLIO_REAL(eventfd)(value, flags));
}

DLIO_FD_HOOK int memfd_create(const char* name, unsigned flags) {
  return fh::Made(DLIO_REAL(memfd_create)(name, flags));
}

DLIO_FD_HOOK int epoll_create(int size) { return fh::Made(DLIO_REAL(epoll_create)(size)); }

DLIO_FD_HOOK int epoll_create1(int flags) { return fh::Made(DLIO_REAL(epoll_create1)(flags)); }

DLIO_FD_HOOK int timerfd_create(int clock, int flags) {
  return fh::Made(DLIO_REAL(timerfd_create)(clock, flags));
}

DLIO_FD_HOOK int signalfd(int fd, const sigset_t* mask, int flags) {
  const int r = DLIO_REAL(signalfd)(fd, mask, flags);
  return fd == -1 ? fh::Made(r) : r;
}

DLIO_FD_HOOK int inotify_init(void) { return fh::Made(DLIO_REAL(inotify_init)()); }

DLIO_FD_HOOK int inotify_init1(int flags) { return fh::Made(DLIO_REAL(inotify_init1)(flags)); }
