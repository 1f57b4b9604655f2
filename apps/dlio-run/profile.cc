#include "profile.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <system_error>

#include "analyze.h"
#include "run_common.h"

namespace dlio_run {
namespace {

namespace fs = std::filesystem;

// The first integer of these launcher variables (Open MPI, PMIx, MPICH/PMI, srun); -1 if none.
int FirstIntegerOf(std::initializer_list<const char*> names) {
  for (const char* name : names) {
    const char* v = std::getenv(name);
    if (v != nullptr && *v != '\0') return std::atoi(v);
  }
  return -1;
}

int LauncherWorldSize() {
  return FirstIntegerOf({"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS"});
}

int LauncherRank() {
  return FirstIntegerOf({"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"});
}

std::string Join(const std::vector<std::string>& parts, char sep) {
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty()) out.push_back(sep);
    out += p;
  }
  return out;
}

// The program being run, for ForwardSignal (0: none).
volatile sig_atomic_t g_child = 0;

// A termination signal sent to dlio-run alone (kill PID, a batch system, mpiexec) goes on to the
// program, which writes its trace out and ends; dlio-run waits for it and analyzes as usual. One
// the terminal sent (Ctrl-C) reached the program's whole process group already.
void ForwardSignal(int sig, siginfo_t* info, void*) {
  if (info != nullptr && info->si_code == SI_KERNEL) return;
  const pid_t child = g_child;
  if (child > 0) kill(child, sig);
}

// Forwards SIGTERM, SIGINT and SIGHUP to the child for its lifetime (those dlio-run was not told
// to ignore: the child inherits SIG_IGN). The signals are blocked from before the fork until the
// child's pid is known; the child gets the original dispositions back before it execs.
class SignalForwarding {
 public:
  static constexpr int kSignals[] = {SIGTERM, SIGINT, SIGHUP};

  SignalForwarding() {
    sigset_t block;
    sigemptyset(&block);
    for (int i = 0; i < 3; ++i) sigaddset(&block, kSignals[i]);
    sigprocmask(SIG_BLOCK, &block, &old_mask_);
    for (int i = 0; i < 3; ++i) {
      sigaction(kSignals[i], nullptr, &old_[i]);
      if (old_[i].sa_handler == SIG_IGN) continue;
      struct sigaction sa = {};
      sa.sa_sigaction = ForwardSignal;
      sigemptyset(&sa.sa_mask);
      sa.sa_flags = SA_SIGINFO | SA_RESTART;
      sigaction(kSignals[i], &sa, nullptr);
    }
  }
  ~SignalForwarding() {
    g_child = 0;
    Restore();
  }
  SignalForwarding(const SignalForwarding&) = delete;
  SignalForwarding& operator=(const SignalForwarding&) = delete;

  // In the parent: signals from now on go to `child` (pending ones at once).
  void Started(pid_t child) {
    g_child = child;
    sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
  }
  // In the child, before exec.
  void Restore() {
    for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &old_[i], nullptr);
    sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
  }

 private:
  struct sigaction old_[3] = {};
  sigset_t old_mask_;
};

// Runs argv with `env` added to (or replacing entries of) this process's environment.
dlio::Result<int> RunWithEnvironment(const std::vector<std::string>& command,
                                     const std::vector<std::pair<std::string, std::string>>& env) {
  std::fflush(nullptr);
  SignalForwarding forwarding;
  const pid_t pid = fork();
  if (pid < 0) return dlio::Status::FromErrno(errno, "fork to run " + command[0]);
  if (pid == 0) {
    forwarding.Restore();
    for (const auto& [key, value] : env) setenv(key.c_str(), value.c_str(), 1);
    std::vector<char*> argv;
    for (const auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    std::fprintf(stderr, "dlio-run: error: cannot run %s: %s\n", argv[0], std::strerror(errno));
    _exit(127);
  }
  forwarding.Started(pid);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return dlio::Status::FromErrno(errno, "wait for " + command[0]);
  }
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

}  // namespace

void DeclareProfileOptions(CLI::App* command, ProfileOptions* options) {
  command->add_option("-o,--output", options->output,
                      "trace directory (default dlio-profile; created; traces never replaced, "
                      "analysis.json/.txt and report.html rewritten)");
  command->add_option("--data-dir", options->data_dirs,
                      "trace only files under this prefix (repeatable; default: every file but "
                      ".py/.pyc/.so and /proc, /sys, /dev)");
  command->add_option("command", options->command, "the program and its arguments, after --");
}

int ProfileCommand(const ProfileOptions& options, const Invocation& call) {
  ProfileOptions with_command = options;
  if (!call.after_dashes.empty()) with_command.command = call.after_dashes;
  auto code = Profile(with_command);
  return code.ok() ? *code : Fail(code.status(), kExitRunError);
}

std::vector<std::string> TakeProfileCommand(int* argc, char** argv) {
  std::vector<std::string> command;
  if (*argc < 2 || std::strcmp(argv[1], "profile") != 0) return command;
  for (int i = 2; i < *argc; ++i) {
    if (std::strcmp(argv[i], "--") != 0) continue;
    for (int j = i + 1; j < *argc; ++j) command.emplace_back(argv[j]);
    *argc = i;
    break;
  }
  return command;
}

dlio::Result<std::string> FindPreloadLibrary() {
  if (const char* env = std::getenv("DLIO_PRELOAD_LIB"); env != nullptr && *env != '\0') {
    if (!fs::exists(env)) {
      return dlio::Status::NotFound("DLIO_PRELOAD_LIB names ", env, ", which does not exist");
    }
    return std::string(env);
  }
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return dlio::Status::NotFound("cannot find dlio-run's own path: " + ec.message());
  const fs::path dir = exe.parent_path();
  // The build tree (apps/dlio-run/dlio-run beside preload/) and an install (bin/ beside lib/).
  const std::vector<fs::path> candidates = {
      dir / ".." / ".." / "preload" / "libdlio_preload.so",
      dir / ".." / DLIO_INSTALL_LIBDIR / "libdlio_preload.so",
  };
  std::string looked;
  for (const auto& c : candidates) {
    if (fs::exists(c)) return fs::canonical(c).string();
    if (!looked.empty()) looked += ", ";
    looked += c.lexically_normal().string();
  }
  return dlio::Status::NotFound("libdlio_preload.so not found (looked at ", looked,
                                "); set DLIO_PRELOAD_LIB to its path");
}

dlio::Result<int> Profile(const ProfileOptions& options) {
  if (options.command.empty()) {
    return dlio::Status::InvalidArgument("profile: no command given (dlio-run profile -- CMD ...)");
  }
  std::string lib = options.preload_lib;
  if (lib.empty()) {
    DLIO_ASSIGN_OR_RETURN(lib, FindPreloadLibrary());
  }
  std::error_code ec;
  fs::create_directories(options.output, ec);
  if (ec)
    return dlio::Status::IOError("profile: cannot create --output " + options.output + ": " +
                                 ec.message());
  const std::string output = fs::absolute(options.output).lexically_normal().string();
  std::vector<std::string> prefixes;
  for (const auto& d : options.data_dirs) {
    if (d.empty() || d.find(':') != std::string::npos) {
      return dlio::Status::InvalidArgument("profile: --data-dir '", d,
                                           "' is empty or contains ':' (the list separator)");
    }
    prefixes.push_back(fs::absolute(d).lexically_normal().string());
  }
  std::string preload = lib;
  if (const char* old = std::getenv("LD_PRELOAD"); old != nullptr && *old != '\0') {
    preload.push_back(':');
    preload.append(old);
  }
  const auto code =
      RunWithEnvironment(options.command, {{"LD_PRELOAD", preload},
                                           {"DLIO_PRELOAD_OUTPUT", output},
                                           {"DLIO_PRELOAD_DATA_DIRS", Join(prefixes, ':')}});
  if (!code.ok()) return code;
  // Under a launcher every rank writes into DIR, and a rank that ends first would analyze the
  // others' traces half-written: the analysis is left to `dlio-run analyze` after the job.
  if (LauncherWorldSize() > 1) {
    if (LauncherRank() == 0) {
      std::fprintf(stderr,
                   "dlio-run: note: %d ranks trace into %s; analyze them after the job: "
                   "dlio-run analyze %s (or report, compare)\n",
                   LauncherWorldSize(), output.c_str(), output.c_str());
    }
    return code;
  }
  // The program's exit code stands whatever the analysis does.
  if (auto s = WriteDirectoryAnalysis(output); !s.ok()) {
    std::fprintf(stderr, "dlio-run: warning: no analysis written: %s\n", s.ToString().c_str());
  }
  return code;
}

}  // namespace dlio_run
