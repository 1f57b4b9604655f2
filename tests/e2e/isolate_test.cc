// dlio-run's RunIsolated (apps/dlio-run/isolate.h): what `inspect` runs in a child process, so a
// reader crashing on a corrupt file becomes an error naming the file.
#include "isolate.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <csignal>
#include <cstdio>
#include <cstdlib>

namespace {

TEST_CASE("RunIsolated returns what the child returns", "[e2e][isolate]") {
  for (int code : {0, 1, 2, 77}) {
    auto r = dlio_run::RunIsolated("f.h5", [code] { return code; });
    REQUIRE(r.ok());
    CHECK(*r == code);
  }
}

TEST_CASE("RunIsolated turns a crash into Corruption naming the file", "[e2e][isolate]") {
  auto r = dlio_run::RunIsolated("data/bad.h5", [] {
    std::raise(SIGSEGV);
    return 0;
  });
  REQUIRE(r.status().code() == dlio::StatusCode::kCorruption);
  INFO(r.status().message());
  CHECK(r.status().message().rfind("data/bad.h5: the reader crashed on it (signal 11, ", 0) == 0);
  auto abrt = dlio_run::RunIsolated("x.npz", [] {
    std::abort();
    return 0;
  });
  CHECK(abrt.status().message().find("(signal 6, ") != std::string::npos);
}

TEST_CASE("RunIsolated runs the child's work exactly once", "[e2e][isolate]") {
  // The child's side effects are the caller's (files), not its memory: count through a pipe.
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  auto r = dlio_run::RunIsolated("f", [&] { return static_cast<int>(write(fds[1], "x", 1)); });
  close(fds[1]);
  char buf[4];
  const ssize_t n = read(fds[0], buf, sizeof buf);
  close(fds[0]);
  REQUIRE(r.ok());
  CHECK(*r == 1);
  CHECK(n == 1);
}

}  // namespace
