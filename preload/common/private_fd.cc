#include "private_fd.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

// Raw system calls throughout: these run inside hooks, and the next library's hooks must not see
// (or count) the interposer's own descriptor work.
namespace dlio::preload {
namespace {

constexpr int kHighestBase = 1 << 16;
constexpr int kHeadroom = 64;

void RawClose(int fd) { syscall(SYS_close, fd); }

int DupHigh(int fd) {
  return static_cast<int>(syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, HighFdBase()));
}

// Parses a decimal /proc/self/fd entry name; -1 for "." and "..".
int ParseFd(const char* name) {
  if (*name < '0' || *name > '9') return -1;
  long v = 0;
  for (; *name >= '0' && *name <= '9'; ++name) v = v * 10 + (*name - '0');
  return *name == '\0' && v <= 0x7fffffff ? static_cast<int>(v) : -1;
}

struct LinuxDirent64 {
  uint64_t ino;
  int64_t off;
  unsigned short reclen;
  unsigned char type;
  char name[1];
};

// One pass over /proc/self/fd (open as `dir`): closes what it lists at or above lowfd (not `dir`,
// not `keep`). Returns how many it closed, or -1 when the directory cannot be read.
int CloseListed(int dir, int lowfd, int (*close_fn)(int), int keep) {
  alignas(8) char buf[4096];
  int closed = 0;
  for (;;) {
    const long n = syscall(SYS_getdents64, dir, buf, sizeof buf);
    if (n < 0) return -1;
    if (n == 0) return closed;
    for (long off = 0; off < n;) {
      const auto* d = reinterpret_cast<const LinuxDirent64*>(buf + off);
      off += d->reclen;
      const int fd = ParseFd(d->name);
      if (fd < lowfd || fd == dir || fd == keep) continue;
      if (close_fn(fd) == 0) ++closed;  // the next library's own descriptor stays (EBADF)
    }
  }
}

}  // namespace

PrivateFd& PrivateFd::Get() {
  static PrivateFd fd;  // constant-initialized
  return fd;
}

PrivateFd::Use::Use(PrivateFd& p) : p_(p) {
  // Counted before the number is read: Vacate changes the number before it reads the count.
  p_.users_.fetch_add(1);
  fd_ = p_.fd_.load();
}

PrivateFd::Use::~Use() { p_.users_.fetch_sub(1); }

int HighFdBase() {
  rlimit lim{};
  int top = kHighestBase;
  if (syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, nullptr, &lim) == 0 && lim.rlim_cur < rlim_t{1}
                                                                                         << 16) {
    top = static_cast<int>(lim.rlim_cur);
  }
  return top > 2 * kHeadroom ? top - kHeadroom : top / 2;
}

int PrivateFd::Adopt(int fd, bool keep_low) {
  if (fd < 0) return -1;
  const int high = DupHigh(fd);
  if (high >= 0) {
    RawClose(fd);
    fd = high;
  } else if (keep_low) {
    syscall(SYS_fcntl, fd, F_SETFD, FD_CLOEXEC);
  } else {
    RawClose(fd);
    return -1;
  }
  fd_.store(fd);
  return fd;
}

void PrivateFd::Close() {
  const int fd = fd_.exchange(-1);
  if (fd < 0) return;
  WaitForUsers();
  RawClose(fd);
}

void PrivateFd::Drop() { fd_.store(-1); }

void PrivateFd::Vacate(int fd) {
  if (fd < 0 || fd_.load() != fd) return;
  const int moved = DupHigh(fd);
  int expected = fd;
  if (!fd_.compare_exchange_strong(expected, moved)) {  // moved or closed meanwhile
    if (moved >= 0) RawClose(moved);
    return;
  }
  WaitForUsers();
  RawClose(fd);
}

// Users hold the descriptor for one write or one request (bounded by the cache client's timeout).
// The wait is bounded too (about 10 s), so that a program's signal handler calling dup2 onto our
// number while its thread holds a Use cannot hang the program.
void PrivateFd::WaitForUsers() const {
  for (int i = 0; i < 10000 && users_.load() != 0; ++i) {
    if (i < 100) {
      sched_yield();
    } else {
      timespec ms{0, 1000000};
      nanosleep(&ms, nullptr);
    }
  }
}

int CloseRangeAround(unsigned first, unsigned last, int flags, int (*next)(unsigned, unsigned, int),
                     const PrivateFd& keep) {
  const int k = keep.Peek();
  if (k < 0 || static_cast<unsigned>(k) < first || static_cast<unsigned>(k) > last) {
    return next(first, last, flags);
  }
  const auto kept = static_cast<unsigned>(k);
  int r = 0;
  if (kept > first) r = next(first, kept - 1, flags);
  if (r == 0 && kept < last) r = next(kept + 1, last, flags);
  return r;
}

void CloseFromBySearch(int lowfd, int (*close_fn)(int), const PrivateFd& keep) {
  const int kept = keep.Peek();
  const long dir =
      syscall(SYS_openat, AT_FDCWD, "/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    // Closing while listing may skip entries: list again from the start until nothing is left.
    int closed = 0;
    do {
      syscall(SYS_lseek, dir, 0, SEEK_SET);
      closed = CloseListed(static_cast<int>(dir), lowfd, close_fn, kept);
    } while (closed > 0);
    RawClose(static_cast<int>(dir));
    if (closed == 0) return;
  }
  for (int fd = lowfd; fd < kHighestBase; ++fd) {  // no /proc: every number that may be open
    if (fd != kept) close_fn(fd);
  }
}

}  // namespace dlio::preload
