// libdlio_cache_preload.so against a test server speaking cache_wire.h (cache_test_server.h):
// the bytes a program reads every way (read, pread, mmap, fread, fgets, getline, readv, dups) are
// the plain run's; the opens the server sees, what it is told (read reports, invalidations, the
// future) and what happens when it dies or is not there.
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
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
using dlio::testing::RunCommand;
using dlio::testing::TempDir;

const std::string kLib = DLIO_CACHE_PRELOAD_LIB;
const std::string kProgram = DLIO_CACHE_READ_PROGRAM;
const std::string kDlioRun = DLIO_BINARY_DIR "/apps/dlio-run/dlio-run";

// Bytes 1..255 (no NUL: fgets' lines are measured with strlen) with a newline every 61 bytes.
void WriteData(const std::string& path, size_t size, unsigned seed) {
  std::string data(size, '\0');
  for (size_t i = 0; i < size; ++i) {
    data[i] = i % 61 == 60 ? '\n' : static_cast<char>(1 + (i * 7 + seed) % 255);
  }
  dlio::testing::WriteTextFile(path, data);
}

struct Fixture {
  TempDir tmp;
  std::string data = tmp / "data";
  std::string other = tmp / "other";
  std::string socket = tmp / "cache.sock";
  std::string a = data + "/a.bin";
  std::string b = data + "/sub/b.txt";
  std::string c = other + "/c.bin";

  Fixture() {
    std::filesystem::create_directories(data + "/sub");
    std::filesystem::create_directories(other);
    WriteData(a, 100000, 3);
    WriteData(b, 5000, 11);
    WriteData(c, 7000, 5);
  }

  // The program under the preload (`env` before it: more variables).
  dlio::testing::CommandResult Preloaded(const std::string& args, const std::string& env = "") {
    return RunCommand("env LD_PRELOAD='" + kLib + "' DLIO_CACHE_SOCKET='" + socket +
                      "' DLIO_CACHE_DATA_DIRS='" + data + "' " + env + " '" + kProgram + "' " +
                      args);
  }
  dlio::testing::CommandResult Plain(const std::string& args) {
    return RunCommand("'" + kProgram + "' " + args);
  }
};

// The output without the preload's warning lines.
std::string WithoutWarnings(const std::string& out) {
  std::istringstream in(out);
  std::string line;
  std::string kept;
  while (std::getline(in, line)) {
    if (line.rfind("dlio cache: warning:", 0) != 0) kept += line + "\n";
  }
  return kept;
}

// The warning lines of an output.
std::vector<std::string> Warnings(const std::string& out) {
  std::istringstream in(out);
  std::string line;
  std::vector<std::string> warnings;
  while (std::getline(in, line)) {
    if (line.rfind("dlio cache: warning:", 0) == 0) warnings.push_back(line);
  }
  return warnings;
}

double SecondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

TEST_CASE("cache preload: every way of reading returns the source's bytes, misses then hits") {
  Fixture f;
  TestCacheServer server(f.socket, TestServerOptions{});
  const std::string args = "sum '" + f.a + "' '" + f.b + "' '" + f.c + "'";
  const auto plain = f.Plain(args);
  REQUIRE(plain.exit_code == 0);
  REQUIRE(plain.output.find("dups") != std::string::npos);

  dlio::testing::WriteTextFile(f.tmp / "future", f.a + "\n" + f.b);
  const auto first = f.Preloaded(args, "DLIO_CACHE_FUTURE='" + (f.tmp / "future") + "'");
  INFO(first.output);
  REQUIRE(first.exit_code == 0);
  CHECK(first.output == plain.output);
  CHECK(server.Future() == f.a + "\n" + f.b + "\n");
  const auto second = f.Preloaded(args);
  REQUIRE(second.exit_code == 0);
  CHECK(second.output == plain.output);

  // 8 opens of each data file per run (one per way); c.bin is outside DLIO_CACHE_DATA_DIRS.
  const auto opens = server.Opens();
  REQUIRE(opens.size() == 32);
  std::map<std::string, std::vector<int>> tiers;
  for (const auto& o : opens) tiers[o.path].push_back(o.tier);
  REQUIRE(tiers.size() == 2);
  for (const auto& path : {f.a, f.b}) {
    INFO(path);
    REQUIRE(tiers[path].size() == 16);
    CHECK(tiers[path][0] == -1);  // the miss, which made the copy
    for (size_t i = 1; i < 16; ++i) CHECK(tiers[path][i] == 0);
  }
  // One read report per open, when its last descriptor closed, counting the whole file.
  const auto reports = server.Reports(32);
  REQUIRE(reports.size() == 32);
  for (const auto& r : reports) {
    INFO(r.path << " tier " << r.tier);
    CHECK(r.bytes == std::filesystem::file_size(r.path));
  }
  CHECK(server.Invalidated().empty());
  CHECK(server.Clients() == 2);
}

TEST_CASE("cache preload: writes pass through and drop the file's copies") {
  Fixture f;
  TestCacheServer server(f.socket, TestServerOptions{});
  const std::string w = f.data + "/w.txt";
  const auto run = f.Preloaded("write '" + w + "'");
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  std::filesystem::remove(w);
  CHECK(run.output == f.Plain("write '" + w + "'").output);
  CHECK(dlio::testing::ReadTextFile(w).size() == 1300);
  CHECK(server.Opens().empty());
  // The O_WRONLY|O_CREAT|O_TRUNC open and the O_RDWR one.
  CHECK(server.Invalidated() == std::vector<std::string>{w, w});
}

TEST_CASE("cache preload: a forked child connects on its own and reads the same bytes") {
  Fixture f;
  TestCacheServer server(f.socket, TestServerOptions{});
  const std::string args = "fork '" + f.a + "' '" + f.b + "'";
  const auto run = f.Preloaded(args);
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  CHECK(run.output == f.Plain(args).output);
  CHECK(server.Clients() == 2);
  REQUIRE(server.Opens().size() == 4);
  // The parent's opens come after the child's copies were made: hits.
  CHECK(server.Opens()[2].tier == 0);
  CHECK(server.Opens()[3].tier == 0);
}

TEST_CASE("cache preload: threads share the connection and read the same bytes") {
  Fixture f;
  TestCacheServer server(f.socket, TestServerOptions{});
  const std::string args = "threads '" + f.a + "' '" + f.b + "'";
  const auto run = f.Preloaded(args);
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  CHECK(run.output == f.Plain(args).output);
  CHECK(server.Clients() == 1);
  CHECK(server.Opens().size() == 8);
  CHECK(server.Reports(8).size() == 8);
}

TEST_CASE("cache preload: a server that dies mid-run leaves the program reading the source") {
  Fixture f;
  TestServerOptions options;
  options.die_on_open = 4;
  TestCacheServer server(f.socket, options);
  const std::string args = "passes 3 '" + f.a + "' '" + f.b + "'";
  const auto run = f.Preloaded(args);
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  CHECK(WithoutWarnings(run.output) == f.Plain(args).output);
  const std::string warning = "dlio cache: warning: cache server " + f.socket + ": open failed";
  CHECK(run.output.find(warning) != std::string::npos);
  CHECK(run.output.find(warning) == run.output.rfind("dlio cache: warning:"));  // one line
  CHECK(server.Opens().size() == 4);
}

TEST_CASE("cache preload: no server at the socket: one warning, the source's bytes") {
  Fixture f;
  const std::string args = "sum '" + f.a + "'";
  const auto run = f.Preloaded(args);
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  CHECK(WithoutWarnings(run.output) == f.Plain(args).output);
  CHECK(run.output.find("dlio cache: warning: cache server " + f.socket + ": cannot connect") !=
        std::string::npos);
}

TEST_CASE("cache preload: reads of a slow source take its latency per call and its bandwidth") {
  Fixture f;
  TestServerOptions options;
  options.latency_ns = 5000000;   // 5 ms per call
  options.bytes_per_s = 4 << 20;  // 4 MiB/s: 100000 bytes take at least 23.8 ms
  options.cache = false;
  TestCacheServer server(f.socket, options);
  const auto run = f.Preloaded("timed '" + f.a + "'");
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  char path[4096];
  long long elapsed_ns = 0;
  int calls = 0;
  unsigned long long bytes = 0;
  REQUIRE(std::sscanf(run.output.c_str(), "timed %4095s %lld %d %llu", path, &elapsed_ns, &calls,
                      &bytes) == 4);
  CHECK(bytes == 100000);
  CHECK(calls == 26);  // 24 full reads of 4096 bytes, one of 1696, one at the end
  const double expected_ns = calls * 5e6 + bytes * 1e9 / (4 << 20);
  CHECK(static_cast<double>(elapsed_ns) >= expected_ns);
  const auto reports = server.Reports(1);
  REQUIRE(reports.size() == 1);
  CHECK(reports[0].tier == -1);
  CHECK(reports[0].bytes == 100000);
}

TEST_CASE("cache preload: files outside DLIO_CACHE_DATA_DIRS never reach the server") {
  Fixture f;
  TestCacheServer server(f.socket, TestServerOptions{});
  const std::string args = "sum '" + f.c + "'";
  const auto run = f.Preloaded(args);
  REQUIRE(run.exit_code == 0);
  CHECK(run.output == f.Plain(args).output);
  CHECK(server.Opens().empty());
  CHECK(server.Clients() == 0);  // nothing to ask: never connected
}

TEST_CASE("cache preload: under dlio-run profile the tracer sees every byte the cache serves") {
  Fixture f;
  TestCacheServer server(f.socket, TestServerOptions{});
  const std::string out = f.tmp / "prof";
  const std::string args = "passes 2 '" + f.a + "'";
  const auto run =
      RunCommand("env LD_PRELOAD='" + kLib + "' DLIO_CACHE_SOCKET='" + f.socket +
                 "' DLIO_CACHE_DATA_DIRS='" + f.data + "' '" + kDlioRun + "' profile --output '" +
                 out + "' --data-dir '" + f.data + "' -- '" + kProgram + "' " + args);
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  // The tracer's descriptor and the cache's connection are out of the way: the program's
  // descriptor numbers are a plain run's.
  CHECK(run.output.find(f.Plain(args).output) != std::string::npos);
  REQUIRE(server.Opens().size() == 2);
  CHECK(server.Opens()[1].tier == 0);
  const auto traces = dlio::preload_test::TraceFiles(out);
  REQUIRE(traces.size() == 1);
  const auto events = dlio::preload_test::ReadEvents(traces[0]);
  int opens = 0;
  for (const auto& e : events) {
    if (e.at("name") == "open" && e.at("args").at("fname") == f.a) ++opens;
  }
  CHECK(opens == 2);
  CHECK(dlio::preload_test::BytesCovered(events, f.a) == 100000);
}

TEST_CASE("cache preload: numpy's np.load (open, read, dup, fdopen, fread) through the cache") {
  const std::string python = dlio::testing::SystemPython();
  REQUIRE(!python.empty());
  Fixture f;
  const std::string make =
      "import numpy as np\n"
      "for i in range(3): np.save('" +
      f.data + "/s%d.npy' % i, np.arange(50000, dtype=np.float32) * (i + 1))\n";
  dlio::testing::WriteTextFile(f.tmp / "make.py", make);
  REQUIRE(RunCommand("'" + python + "' '" + (f.tmp / "make.py") + "'").exit_code == 0);
  const std::string load =
      "import numpy as np\n"
      "for p in range(2):\n"
      "    print([float(np.load('" +
      f.data + "/s%d.npy' % i).sum()) for i in range(3)])\n";
  dlio::testing::WriteTextFile(f.tmp / "load.py", load);
  TestCacheServer server(f.socket, TestServerOptions{});
  const std::string cmd = "'" + python + "' '" + (f.tmp / "load.py") + "'";
  const auto plain = RunCommand(cmd);
  REQUIRE(plain.exit_code == 0);
  const auto run = RunCommand("env LD_PRELOAD='" + kLib + "' DLIO_CACHE_SOCKET='" + f.socket +
                              "' DLIO_CACHE_DATA_DIRS='" + f.data + "' " + cmd);
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  CHECK(run.output == plain.output);
  const auto opens = server.Opens();
  REQUIRE(opens.size() == 6);  // one per np.load
  for (size_t i = 0; i < 6; ++i) CHECK(opens[i].tier == (i < 3 ? -1 : 0));
  // numpy reads the array through a dup of Python's descriptor (fdopen, fread) after Python's
  // buffered read of the header: both count, so the bytes reported pass the file's size (by what
  // Python's buffer read of the array's start).
  const auto reports = server.Reports(6);
  REQUIRE(reports.size() == 6);
  for (const auto& r : reports) {
    CHECK(r.bytes > std::filesystem::file_size(r.path));
    CHECK(r.bytes <= std::filesystem::file_size(r.path) + 8192);
  }
}

TEST_CASE("cache preload: a server that never answers costs one timeout, then the source is read") {
  Fixture f;
  TestServerOptions options;
  options.silent = true;  // accepts, reads every request, answers none (the hello included)
  TestCacheServer server(f.socket, options);
  const std::string args = "passes 3 '" + f.a + "' '" + f.b + "'";
  const auto t0 = std::chrono::steady_clock::now();
  const auto run = f.Preloaded(args, "DLIO_CACHE_TIMEOUT_MS=1500");
  const double seconds = SecondsSince(t0);
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  CHECK(WithoutWarnings(run.output) == f.Plain(args).output);
  const auto warnings = Warnings(run.output);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0] == "dlio cache: warning: cache server " + f.socket +
                           ": no hello (no answer within 1500 ms, DLIO_CACHE_TIMEOUT_MS); "
                           "reading the source directly");
  CHECK(seconds >= 1.5);  // it waited; then the five other opens did not ask again
  CHECK(seconds < 60);
}

TEST_CASE("cache preload: a reply that comes too late is never taken for a later request's") {
  Fixture f;
  TestServerOptions options;
  options.hang_on_open = 2;  // b's first open: answered after 3 s, with a's copy
  options.hang_ms = 3000;
  TestCacheServer server(f.socket, options);
  const std::string args = "passes 3 '" + f.a + "' '" + f.b + "'";
  const auto run = f.Preloaded(args, "DLIO_CACHE_TIMEOUT_MS=1000");
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  CHECK(WithoutWarnings(run.output) == f.Plain(args).output);
  const auto warnings = Warnings(run.output);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find(": open failed (no answer within 1000 ms, DLIO_CACHE_TIMEOUT_MS)") !=
        std::string::npos);
  CHECK(server.Opens().size() == 2);  // the connection was dropped: nothing asked after
}

TEST_CASE("cache preload: DLIO_CACHE_TIMEOUT_MS must be milliseconds: else a warning naming it") {
  Fixture f;
  TestCacheServer server(f.socket, TestServerOptions{});
  const std::string args = "sum '" + f.a + "'";
  const std::string value = GENERATE("abc", "0", "-5", "12x", "99999999999");
  const auto run = f.Preloaded(args, "DLIO_CACHE_TIMEOUT_MS='" + value + "'");
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  CHECK(WithoutWarnings(run.output) == f.Plain(args).output);
  const auto warnings = Warnings(run.output);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0] == "dlio cache: warning: DLIO_CACHE_TIMEOUT_MS='" + value +
                           "' is not a number of milliseconds from 1 to 86400000: 10000 used");
  CHECK(server.Opens().size() == 8);  // the cache is used all the same
}

TEST_CASE("cache preload: a path with .. after a symbolic link reads the file the kernel opens") {
  // data/d/link -> TARGET/x, so data/d/link/../secret is TARGET/secret, not data/d/secret.
  Fixture f;
  TestCacheServer server(f.socket, TestServerOptions{});
  const bool target_cached = GENERATE(false, true);
  const std::string target = target_cached ? f.data + "/e" : f.other + "/e";
  std::filesystem::create_directories(f.data + "/d");
  std::filesystem::create_directories(target + "/x");
  dlio::testing::WriteTextFile(f.data + "/d/secret", "the secret next to the link\n");
  dlio::testing::WriteTextFile(target + "/secret", "the file the kernel opens\n");
  std::filesystem::create_directory_symlink(target + "/x", f.data + "/d/link");
  const std::string cat = "cat '" + f.data + "/d/link/../secret'";
  const auto plain = RunCommand(cat);
  REQUIRE(plain.output == "the file the kernel opens\n");
  for (int pass = 0; pass < 2; ++pass) {  // a miss, then (when cached) a hit on the copy
    const auto run = RunCommand("env LD_PRELOAD='" + kLib + "' DLIO_CACHE_SOCKET='" + f.socket +
                                "' DLIO_CACHE_DATA_DIRS='" + f.data + "' " + cat);
    INFO(run.output);
    CHECK(run.output == plain.output);
  }
  const auto opens = server.Opens();
  if (target_cached) {
    REQUIRE(opens.size() == 2);
    CHECK(opens[0].path == target + "/secret");
    CHECK(opens[1].tier == 0);
  } else {
    CHECK(opens.empty());  // outside the data directories
  }
}

}  // namespace
