// preload/common/, the runtime both interposers share (HookScope, DLIO_REAL, the environment
// reader), compiled into this test and checked in-process.
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <csignal>
#include <cstdlib>
#include <string>

#include "common/env.h"
#include "common/hook_scope.h"
#include "common/real.h"

TEST_CASE("preload common: HookScope restores the flag it found, so nested scopes keep it set") {
  using dlio::preload::HookScope;
  using dlio::preload::InHook;
  REQUIRE_FALSE(InHook());
  {
    HookScope outer;
    {
      HookScope inner;
      CHECK(InHook());
    }
    CHECK(InHook());  // the tracer's scope once cleared it here
  }
  CHECK_FALSE(InHook());
}

TEST_CASE(
    "preload common: a real symbol resolves once, one that cannot be names itself and aborts") {
  static std::atomic<void*> slot{nullptr};
  void* read_fn = dlio::preload::ResolveNext(&slot, "read");
  CHECK(read_fn != nullptr);
  CHECK(dlio::preload::ResolveNext(&slot, "read") == read_fn);
  CHECK(DLIO_REAL(getpid)() == getpid());
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    dup2(fds[1], 2);
    static std::atomic<void*> missing{nullptr};
    dlio::preload::ResolveNext(&missing, "dlio_no_such_function");
    _exit(0);  // never reached
  }
  close(fds[1]);
  std::string err;
  char buf[512];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) err.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGABRT);
  CHECK_THAT(err, Catch::Contains("dlio preload: cannot resolve the next definition of "
                                  "dlio_no_such_function"));
}

TEST_CASE("preload common: environment values, integers and the launcher's rank") {
  using dlio::preload::EnvInt;
  using dlio::preload::EnvIntResult;
  ::setenv("DLIO_TEST_ENV_EMPTY", "", 1);
  ::setenv("DLIO_TEST_ENV_INT", "42", 1);
  ::setenv("DLIO_TEST_ENV_BAD", "42x", 1);
  ::unsetenv("DLIO_TEST_ENV_UNSET");
  CHECK(dlio::preload::EnvValue("DLIO_TEST_ENV_EMPTY") == nullptr);
  CHECK(dlio::preload::EnvPresent("DLIO_TEST_ENV_EMPTY"));
  CHECK_FALSE(dlio::preload::EnvPresent("DLIO_TEST_ENV_UNSET"));
  int64_t v = -7;
  CHECK(EnvInt("DLIO_TEST_ENV_UNSET", 0, 100, &v) == EnvIntResult::kUnset);
  CHECK(EnvInt("DLIO_TEST_ENV_EMPTY", 0, 100, &v) == EnvIntResult::kUnset);
  CHECK(EnvInt("DLIO_TEST_ENV_BAD", 0, 100, &v) == EnvIntResult::kBad);
  CHECK(EnvInt("DLIO_TEST_ENV_INT", 0, 41, &v) == EnvIntResult::kBad);
  CHECK(v == -7);
  CHECK(EnvInt("DLIO_TEST_ENV_INT", 0, 100, &v) == EnvIntResult::kOk);
  CHECK(v == 42);
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    ::unsetenv(name);
  }
  CHECK(dlio::preload::RankFromEnvironment() == -1);
  ::setenv("PMIX_RANK", "x", 1);  // not a number: the next variable is asked
  ::setenv("SLURM_PROCID", "3", 1);
  CHECK(dlio::preload::RankFromEnvironment() == 3);
  ::unsetenv("PMIX_RANK");
  ::unsetenv("SLURM_PROCID");
}
