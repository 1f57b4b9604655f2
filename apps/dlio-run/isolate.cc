#include "isolate.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>

namespace dlio_run {

dlio::Result<int> RunIsolated(const std::string& what, const std::function<int()>& body) {
  std::fflush(nullptr);  // nothing buffered is written twice
  const pid_t pid = fork();
  if (pid < 0) return body();
  if (pid == 0) {
    // A crash must end the child by its signal, whatever handlers the parent installed (a
    // sanitizer turns SIGSEGV and SIGFPE into a report and exit code 1): the parent reports the
    // signal.
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) std::signal(sig, SIG_DFL);
    const int code = body();
    std::fflush(nullptr);
    // _exit: the child's libraries need no cleanup, and their exit handlers (libhdf5 closing
    // what a corrupt file left half open) could crash after the answer was printed.
    _exit(code);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      return dlio::Status::FromErrno(errno, "waitpid for the child inspecting " + what);
    }
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  const int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  return dlio::Status::Corruption(
      what, ": the reader crashed on it (signal ", sig, ", ", strsignal(sig),
      "): the file is corrupt in a way its format library does not detect");
}

}  // namespace dlio_run
