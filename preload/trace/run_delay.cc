#include "run_delay.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>

#include "common/private_fd.h"
#include "trace/pfw_codec.h"

namespace dlio::preload {
namespace {

constexpr int kSchedstatNotOpened = -2;
constexpr int kSchedstatUnavailable = -1;

struct RunDelayState {
  int fd = kSchedstatNotOpened;
  int64_t last_read_us = 0;
};

__attribute__((tls_model("initial-exec"))) thread_local RunDelayState t_run_delay;

// Every thread's descriptor (0: a free slot; ours are never 0), so that a fork child can close
// those of its parent's other threads, which it inherits and nothing of it would ever use.
constexpr int kSchedstatSlots = 512;
std::atomic<int> g_schedstat_fds[kSchedstatSlots];

void RegisterSchedstatFd(int fd) {
  for (auto& slot : g_schedstat_fds) {
    int empty = 0;
    if (slot.compare_exchange_strong(empty, fd)) return;
  }  // all taken: the descriptor is left to exec (close-on-exec) in a fork child
}

void UnregisterSchedstatFd(int fd) {
  for (auto& slot : g_schedstat_fds) {
    int mine = fd;
    if (slot.compare_exchange_strong(mine, 0)) return;
  }
}

// The thread's schedstat file at a high number, or kSchedstatUnavailable.
int OpenSchedstat() {
  const long fd =
      syscall(SYS_openat, AT_FDCWD, "/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return kSchedstatUnavailable;
  const long high = syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, HighFdBase());
  syscall(SYS_close, fd);
  if (high < 0) return kSchedstatUnavailable;
  RegisterSchedstatFd(static_cast<int>(high));
  return static_cast<int>(high);
}

// The second of "<on-cpu ns> <run-delay ns> <timeslices>\n", in microseconds; -1 when `text`
// is not that line (a descriptor the program took over holds something else).
int64_t ParseRunDelay(const char* text, long len) {
  int64_t fields[3] = {0, 0, 0};
  int field = 0;
  bool digits = false;
  for (long i = 0; i < len; ++i) {
    const char c = text[i];
    if (c >= '0' && c <= '9' && field < 3) {
      if (fields[field] > (INT64_MAX - 9) / 10) return -1;
      fields[field] = fields[field] * 10 + (c - '0');
      digits = true;
    } else if ((c == ' ' || c == '\n') && digits) {
      ++field;
      digits = false;
      if (c == '\n') break;
    } else {
      return -1;
    }
  }
  return field == 3 ? fields[1] / 1000 : -1;
}

// The run delay in the schedstat file open as `fd`, microseconds; -1 when it holds none.
int64_t ReadRunDelay(int fd) {
  char text[96];
  const long n = syscall(SYS_pread64, fd, text, sizeof text, 0);
  return n > 0 ? ParseRunDelay(text, n) : -1;
}

}  // namespace

int64_t ThreadRunDelay(int64_t now_us) {
  RunDelayState& s = t_run_delay;
  if (s.fd == kSchedstatUnavailable) return -1;
  if (s.fd != kSchedstatNotOpened && now_us - s.last_read_us < pfw::kRunDelayEveryUs) return -1;
  if (s.fd == kSchedstatNotOpened && (s.fd = OpenSchedstat()) == kSchedstatUnavailable) return -1;
  const int64_t delay = ReadRunDelay(s.fd);
  if (delay < 0) {
    UnregisterSchedstatFd(s.fd);
    s.fd = kSchedstatUnavailable;  // not closed: the number may be the program's now
    return -1;
  }
  s.last_read_us = now_us;
  return delay;
}

void CloseThreadRunDelay() {
  RunDelayState& s = t_run_delay;
  if (s.fd >= 0) {
    UnregisterSchedstatFd(s.fd);
    syscall(SYS_close, s.fd);
  }
  s = RunDelayState{};
}

void ResetRunDelayAfterFork() {
  for (auto& slot : g_schedstat_fds) {
    const int fd = slot.exchange(0);
    // Closed only while it still holds a schedstat: a thread that has not read since the program
    // closed its number (close_range) may not know that the number is the program's now.
    if (fd > 0 && ReadRunDelay(fd) >= 0) syscall(SYS_close, fd);
  }
  t_run_delay = RunDelayState{};
}

}  // namespace dlio::preload
