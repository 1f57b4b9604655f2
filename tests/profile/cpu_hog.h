// Busy processes beside a test, as a loaded CI host runs it: what a test infers from timing
// (fit's batches and steps) is checked with the CPU taken from it.
#pragma once

#include <signal.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <vector>

namespace dlio::testing {

// `n` child processes that spin until the hog is destroyed (killed and reaped then), or until
// the test process dies (PR_SET_PDEATHSIG): none outlives the test.
class CpuHog {
 public:
  explicit CpuHog(int n) {
    const pid_t parent = getpid();
    for (int i = 0; i < n; ++i) {
      const pid_t pid = fork();
      if (pid == 0) Spin(parent);
      if (pid > 0) pids_.push_back(pid);
    }
  }
  ~CpuHog() {
    for (pid_t pid : pids_) kill(pid, SIGKILL);
    for (pid_t pid : pids_) waitpid(pid, nullptr, 0);
  }
  CpuHog(const CpuHog&) = delete;
  CpuHog& operator=(const CpuHog&) = delete;

  int size() const { return static_cast<int>(pids_.size()); }

 private:
  [[noreturn]] static void Spin(pid_t parent) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(0);       // the parent died before the line above
    for (;;) asm volatile("" ::: "memory");  // a loop the compiler keeps
  }

  std::vector<pid_t> pids_;
};

}  // namespace dlio::testing
