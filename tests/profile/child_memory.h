// Runs a function in a forked child and reports how much its resident memory grew: memory bounds
// of importers asserted without timing, and without this process's heap in the figure.
#pragma once

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <functional>

namespace dlio::testing {

struct ChildRun {
  int exit_code = -1;          // what `fn` returned (-1: the child died or could not be run)
  int64_t rss_growth_kib = 0;  // the child's peak RSS less its RSS when it started
};

inline int64_t ResidentKib() {
  long pages = 0, resident = 0;
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  const int got = std::fscanf(f, "%ld %ld", &pages, &resident);
  std::fclose(f);
  return got == 2 ? resident * (sysconf(_SC_PAGESIZE) / 1024) : 0;
}

// `fn` runs in a child; its return value (0-255) is the exit code. The child's figures go back
// through a pipe.
inline ChildRun RunInChild(const std::function<int()>& fn) {
  int fds[2];
  ChildRun run;
  if (pipe(fds) != 0) return run;
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const int64_t start = ResidentKib();
    const int code = fn();
    struct rusage ru {};
    getrusage(RUSAGE_SELF, &ru);
    const int64_t growth = static_cast<int64_t>(ru.ru_maxrss) - start;
    const ssize_t n = write(fds[1], &growth, sizeof growth);
    _exit(n == sizeof growth ? code : 255);
  }
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    return run;
  }
  int64_t growth = 0;
  const bool got = read(fds[0], &growth, sizeof growth) == sizeof growth;
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (got && WIFEXITED(status)) {
    run.exit_code = WEXITSTATUS(status);
    run.rss_growth_kib = growth;
  }
  return run;
}

}  // namespace dlio::testing
