// Both interposers keep their descriptors out of the program's way: fd_program.c prints every
// descriptor number, close() result and errno it meets (opens, dups, double closes, dup2 onto 900,
// 1023 and onto the interposers' own descriptors, fd 1 reopened on a file, closefrom,
// close_range, execl and execv with 5000 arguments), and its output is byte-identical plain,
// under the tracer, under the cache client (with and without a server) and under both. Their
// tables follow closefrom and close_range (a pipe at a freed number is no file's), and the trace
// stays valid and complete.
#include <sys/resource.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cache_test_server.h"
#include "preload_test_util.h"
#include "test_util.h"

namespace {

using dlio::cache_test::TestCacheServer;
using dlio::cache_test::TestServerOptions;
using dlio::preload_test::ArgOr;
using dlio::preload_test::ReadEvents;
using dlio::preload_test::TraceFiles;
using dlio::testing::RunCommand;
using dlio::testing::TempDir;

const std::string kTracer = DLIO_PRELOAD_LIB;
const std::string kCache = DLIO_CACHE_PRELOAD_LIB;
const std::string kProgram = DLIO_FD_PROGRAM;
const std::string kDlioRun = DLIO_BINARY_DIR "/apps/dlio-run/dlio-run";

struct Fixture {
  TempDir tmp;
  std::string data = tmp / "data";
  std::string out = tmp / "out";
  std::string socket = tmp / "cache.sock";
  std::string report = tmp / "foreign.txt";

  Fixture() {
    std::filesystem::create_directories(data);
    std::filesystem::create_directories(out);
    std::string bytes(8192, '\0');
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>('a' + i % 23);
    dlio::testing::WriteTextFile(data + "/in.bin", bytes);
  }

  // The environment of a run: the tracer and/or the cache client (tracer first, as `dlio-run
  // profile` puts it).
  std::string Env(bool tracer, bool cache) const {
    std::string preload;
    if (tracer) preload = kTracer;
    if (cache) preload += (preload.empty() ? "" : ":") + kCache;
    if (preload.empty()) return "";
    return "env LD_PRELOAD='" + preload + "' DLIO_PRELOAD_OUTPUT='" + out +
           "' DLIO_PRELOAD_DATA_DIRS='" + data + "' DLIO_CACHE_SOCKET='" + socket +
           "' DLIO_CACHE_DATA_DIRS='" + data + "' ";
  }

  dlio::testing::CommandResult Run(const std::string& env, const std::string& args) const {
    return RunCommand(env + "'" + kProgram + "' " + args);
  }

  std::vector<int> Foreign() const {
    std::istringstream in(dlio::testing::ReadTextFile(report));
    std::vector<int> fds;
    for (int fd = 0; in >> fd;) fds.push_back(fd);
    return fds;
  }
};

// The output without the cache client's warning lines, and how many there were.
std::string WithoutWarnings(const std::string& output, int* warnings) {
  std::istringstream in(output);
  std::string line;
  std::string kept;
  *warnings = 0;
  while (std::getline(in, line)) {
    if (line.rfind("dlio cache: warning:", 0) == 0) {
      ++*warnings;
    } else {
      kept += line + "\n";
    }
  }
  return kept;
}

// Where PrivateFd keeps a descriptor (private_fd.cc): 64 below the soft RLIMIT_NOFILE, at most
// 65536.
int HighFdBase() {
  rlimit lim{};
  getrlimit(RLIMIT_NOFILE, &lim);
  const int top = lim.rlim_cur < (rlim_t{1} << 16) ? static_cast<int>(lim.rlim_cur) : 1 << 16;
  return top > 128 ? top - 64 : top / 2;
}

// The traced reads of in.bin: their sizes, in order, per trace file; and no call on any file of
// 3 bytes (the pipe's reads and writes, at numbers closed files had).
std::vector<std::vector<int64_t>> TracedReads(const Fixture& f) {
  std::vector<std::vector<int64_t>> per_file;
  for (const auto& path : TraceFiles(f.out)) {
    std::vector<int64_t> sizes;
    for (const auto& e : ReadEvents(path)) {
      INFO(e.dump());
      CHECK(ArgOr(e, "count") != 3);
      if (e.at("name") == "read" && e.at("args").at("fname") == f.data + "/in.bin") {
        sizes.push_back(ArgOr(e, "count"));
      }
    }
    per_file.push_back(sizes);
  }
  std::sort(per_file.begin(), per_file.end(),
            [](const auto& a, const auto& b) { return a.size() > b.size(); });
  return per_file;
}

// The program run under the tracer (`mode` 1), the cache client (2) or both (3), with a server.
struct Under {
  Under(const Fixture& f, const std::string& args, int mode)
      : tracer((mode & 1) != 0),
        cache((mode & 2) != 0),
        server(f.socket, TestServerOptions{}),
        run(f.Run(f.Env(tracer, cache), args)) {}
  bool tracer;
  bool cache;
  TestCacheServer server;
  dlio::testing::CommandResult run;
};

TEST_CASE("preload: the program's descriptors, close() results and errno are its own") {
  Fixture f;
  const std::string args = "fds '" + f.data + "' '" + f.report + "'";
  const auto plain = f.Run("", args);
  INFO(plain.output);
  REQUIRE(plain.exit_code == 0);
  REQUIRE(f.Foreign().empty());
  REQUIRE(plain.output.find("exec'ed with 5003 arguments, the last x") != std::string::npos);

  const bool tracer = GENERATE(false, true);
  const bool cache = GENERATE(false, true);
  const bool server_up = GENERATE(false, true);
  if (!tracer && !cache) return;
  if (!cache && server_up) return;
  INFO("tracer " << tracer << ", cache " << cache << ", server " << server_up);
  std::unique_ptr<TestCacheServer> server;
  if (server_up) server = std::make_unique<TestCacheServer>(f.socket, TestServerOptions{});
  const auto run = f.Run(f.Env(tracer, cache), args);
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  int warnings = 0;
  CHECK(WithoutWarnings(run.output, &warnings) == plain.output);
  CHECK(warnings == (cache && !server_up ? 2 : 0));  // one per image: the exec'ed one warns too

  // The interposers' descriptors, all high: the cache's connection (when it connected), the
  // tracer's file and the schedstat file of the one thread that made traced calls (run_delay.h).
  const auto foreign = f.Foreign();
  CHECK(foreign.size() == 2 * static_cast<size_t>(tracer) + static_cast<size_t>(server_up));
  for (int fd : foreign) CHECK(fd >= HighFdBase());

  if (tracer) {
    const auto reads = TracedReads(f);
    REQUIRE(reads.size() == 2);  // the program, then its exec'ed image
    CHECK(reads[0] == std::vector<int64_t>{100, 200, 300});
    CHECK(reads[1] == std::vector<int64_t>{7});
    const auto analyzed = RunCommand("'" + kDlioRun + "' analyze '" + f.out + "'");
    INFO(analyzed.output);
    CHECK(analyzed.exit_code == 0);
  }
  if (server_up) {
    // Every open of a data file reached the server (the connection survived being borrowed,
    // closefrom and close_range) and reported the bytes read through it alone: a was borrowed
    // 2 + foreign times (10 bytes through each copy and 10 through a), the pipe read nothing of
    // it.
    CHECK(server->Opens().size() == 8);
    CHECK(server->Clients() == 2);
    std::multiset<uint64_t> in_bytes;
    std::multiset<uint64_t> out_bytes;
    for (const auto& r : server->Reports(8)) {
      (r.path == f.data + "/in.bin" ? in_bytes : out_bytes).insert(r.bytes);
    }
    const uint64_t borrowed = 20 * (2 + foreign.size());
    CHECK(in_bytes == std::multiset<uint64_t>{100, borrowed, 0, 200, 0, 300, 7});
    CHECK(out_bytes == std::multiset<uint64_t>{13});
  }
}

TEST_CASE("preload: execv with 5000 arguments, and the exec'ed image is traced") {
  Fixture f;
  const std::string args = "execv '" + f.data + "'";
  const auto plain = f.Run("", args);
  REQUIRE(plain.exit_code == 0);
  CHECK(plain.output.find("exec'ed with 5003 arguments, the last y") != std::string::npos);
  const auto run = f.Run(f.Env(true, false), args);
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  CHECK(run.output == plain.output);
  const auto reads = TracedReads(f);
  REQUIRE(reads.size() == 1);
  CHECK(reads[0] == std::vector<int64_t>{7});
}

TEST_CASE(
    "preload: descriptors replaced by raw system calls never receive the interposers' bytes") {
  Fixture f;
  const std::string args = "raw '" + f.data + "' '" + f.report + "'";
  const auto plain = f.Run("", args);
  INFO(plain.output);
  REQUIRE(plain.exit_code == 0);
  REQUIRE(plain.output.find("received -1 bytes (errno 11); its descriptors stayed open") !=
          std::string::npos);
  Under u(f, args, GENERATE(1, 2, 3));
  INFO("tracer " << u.tracer << ", cache " << u.cache << ":\n" << u.run.output);
  REQUIRE(u.run.exit_code == 0);
  int warnings = 0;
  CHECK(WithoutWarnings(u.run.output, &warnings) == plain.output);
  // The tracer's file and its thread's schedstat file, the cache's connection.
  CHECK(f.Foreign().size() == 2 * static_cast<size_t>(u.tracer) + static_cast<size_t>(u.cache));
  if (u.cache) {
    // The connection is gone (one warning), the next opens read the source.
    CHECK(warnings == 1);
    CHECK(u.run.output.find("(Transport endpoint is not connected)") != std::string::npos);
    CHECK(u.server.Opens().size() == 1);
  }
  if (u.tracer) {
    const auto reads = TracedReads(f);  // the trace reopened by name, complete
    REQUIRE(reads.size() == 1);
    CHECK(reads[0] == std::vector<int64_t>{100, 200, 300});
  }
}

TEST_CASE("preload: closefrom on a kernel without close_range closes around the interposers") {
  Fixture f;
  const std::string args = "fallback '" + f.data + "'";
  const auto plain = f.Run("", args);
  INFO(plain.output);
  REQUIRE(plain.exit_code == 0);
  if (plain.output.find("skipped") != std::string::npos) return;  // no seccomp here
  Under u(f, args, GENERATE(1, 2, 3));
  INFO("tracer " << u.tracer << ", cache " << u.cache << ":\n" << u.run.output);
  REQUIRE(u.run.exit_code == 0);
  CHECK(u.run.output == plain.output);
  if (u.cache) {
    CHECK(u.server.Opens().size() == 3);  // the connection survived closefrom
    CHECK(u.server.Reports(3).size() == 3);
  }
  if (u.tracer) {
    const auto reads = TracedReads(f);
    REQUIRE(reads.size() == 1);
    CHECK(reads[0] == std::vector<int64_t>{100, 200});
  }
}

}  // namespace
