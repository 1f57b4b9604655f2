// dlio-run's RunIsolated (apps/dlio-run/isolate.h): what `inspect` runs in a child process, so a
// reader crashing on a corrupt file becomes an error naming the file.
#include "isolate.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <csignal>
#include <cstdio>
#include <cstdlib>

#include "test_util.h"

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

#if DLIO_TEST_HDF5
TEST_CASE("dlio-run inspect: a file libhdf5 crashes on is an error naming it", "[e2e][isolate]") {
  // One byte of a file dlio wrote: its /data layout message says version 2 instead of 3 (and in
  // the other, 0 dimensions instead of 2). libhdf5 1.10.8 divides by zero while opening the
  // dataset (SIGFPE; h5py does too), before dlio can look at it.
  const std::string dir = std::string(DLIO_SOURCE_DIR) + "/tests/format/data/hdf5/";
  const std::string dlio_run = std::string(DLIO_BINARY_DIR) + "/apps/dlio-run/dlio-run";
  const dlio::testing::CommandResult good =
      dlio::testing::RunCommand(dlio_run + " inspect " + dir + "original_variable.h5");
  INFO(good.output);
  REQUIRE(good.exit_code == 0);
  for (const char* name : {"crash_layout_version.h5", "crash_layout_rank.h5"}) {
    const std::string path = dir + name;
    const dlio::testing::CommandResult r = dlio::testing::RunCommand(dlio_run + " inspect " + path);
    INFO(r.output);
    CHECK(r.exit_code == 1);
    CHECK(r.output.find("dlio-run: error: Corruption: " + path +
                        ": the reader crashed on it (signal 8, ") != std::string::npos);
  }
}
#endif

}  // namespace
