#include "runner/iostat_profiler.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "dlio/str_cat.h"

extern char** environ;

namespace dlio::runner_internal {
namespace {

// `program` found on PATH as execvp would ("" when there is none).
std::string FindOnPath(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const std::string dir = end > start ? dirs.substr(start, end - start) : ".";
    const std::string candidate = dir + "/" + program;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    start = end + 1;
  }
  return "";
}

}  // namespace

Result<std::unique_ptr<IostatProcess>> IostatProcess::Start(const std::string& folder) {
  const std::string program = FindOnPath("iostat");
  if (program.empty()) {
    return Status::NotFound(
        "profiling.profiler is iostat (with workflow.profiling), but no `iostat` program is on "
        "PATH (Debian and Ubuntu: the sysstat package); set profiling.profiler: none to run "
        "without it");
  }
  const std::string final_path = folder + "/iostat.json";
  const std::string temp = StrCat(final_path, ".tmp-", ::getpid());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Status::IOError("profiling.profiler iostat: cannot create ", temp, ": ",
                           std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fd, STDERR_FILENO);
  // DLIO's flags: MB, device report, extended, timestamps, CPU, no since-boot report, JSON; all
  // devices, every second.
  std::vector<std::string> args{program, "-mdxtcy", "-o", "JSON", "1"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fd);
  if (rc != 0) {
    ::unlink(temp.c_str());
    return Status::IOError("profiling.profiler iostat: cannot start ", program, ": ",
                           std::strerror(rc));
  }
  return std::unique_ptr<IostatProcess>(new IostatProcess(pid, temp, final_path));
}

Result<int> IostatProcess::Wait() {
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0) {
    if (errno != EINTR) return Status::IOError("waiting for iostat: ", std::strerror(errno));
  }
  pid_ = 0;
  return status;
}

Status IostatProcess::Stop() {
  if (pid_ == 0) return Status::OK();
  ::kill(pid_, SIGINT);  // iostat ends its JSON document on SIGINT (DLIO stops it so too)
  DLIO_ASSIGN_OR_RETURN(int status, Wait());
  const bool ok = (WIFEXITED(status) && WEXITSTATUS(status) == 0) ||
                  (WIFSIGNALED(status) && WTERMSIG(status) == SIGINT);
  if (!ok) {
    ::unlink(temp_.c_str());
    return Status::IOError("profiling.profiler iostat: iostat failed (",
                           WIFEXITED(status) ? StrCat("exit status ", WEXITSTATUS(status))
                                             : StrCat("signal ", WTERMSIG(status)),
                           ")");
  }
  if (::rename(temp_.c_str(), final_.c_str()) != 0) {
    return Status::IOError("profiling.profiler iostat: cannot rename ", temp_, " to ", final_, ": ",
                           std::strerror(errno));
  }
  return Status::OK();
}

IostatProcess::~IostatProcess() {
  if (pid_ == 0) return;
  ::kill(pid_, SIGINT);
  (void)Wait();
  ::unlink(temp_.c_str());
}

}  // namespace dlio::runner_internal
