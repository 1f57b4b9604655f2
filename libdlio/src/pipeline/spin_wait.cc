// The host's spare CPU for SpinBeforeSleep (spin_wait.h): its runnable threads against the CPUs
// this process may use.
#include "pipeline/spin_wait.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cstdio>
#include <thread>

namespace dlio::pipeline_internal {

namespace {

// The CPUs this process may run on (its affinity mask), or the host's.
uint64_t CpusForThisProcess() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return static_cast<uint64_t>(CPU_COUNT(&set));
  return std::thread::hardware_concurrency();
}

int64_t RunnableThreadsNow() {
  const int fd = ::open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char text[128];
  const ssize_t n = ::read(fd, text, sizeof text - 1);
  ::close(fd);
  if (n <= 0) return -1;
  text[n] = '\0';
  return RunnableInLoadavg(text);
}

}  // namespace

int64_t RunnableInLoadavg(const char* text) {
  double load[3];
  long long runnable = -1, total = 0;
  if (std::sscanf(text, "%lf %lf %lf %lld/%lld", &load[0], &load[1], &load[2], &runnable, &total) !=
      5) {
    return -1;
  }
  return runnable;
}

bool HostHasSpareCpu(uint64_t pipeline_threads) {
  const uint64_t cpus = CpusForThisProcess();
  if (pipeline_threads + 1 > cpus) return false;
  const int64_t runnable = RunnableThreadsNow();
  return runnable > 0 && static_cast<uint64_t>(runnable) <= cpus;
}

}  // namespace dlio::pipeline_internal
