// `dlio-run cache-serve` (apps/dlio-run/cache_serve.cc): a real server process and its clients.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "cache/cache_client.h"
#include "cache_test_util.h"

namespace dlio {
namespace {

using cache_internal::CacheClient;
using testing::ContentOf;
using testing::TempDir;

const std::string kDlioRun = DLIO_BINARY_DIR "/apps/dlio-run/dlio-run";

// Starts `dlio-run args...` with stdout and stderr to `log`; returns its pid.
pid_t Spawn(std::vector<std::string> args, const std::string& log) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    FILE* out = std::freopen(log.c_str(), "w", stdout);
    if (out == nullptr || ::dup2(::fileno(stdout), 2) < 0) ::_exit(127);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(kDlioRun.c_str()));
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(kDlioRun.c_str(), argv.data());
    ::_exit(127);
  }
  return pid;
}

int WaitExit(pid_t pid) {
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  return WEXITSTATUS(status);
}

// Connects once the server listens (it starts in well under the time allowed).
std::unique_ptr<CacheClient> ConnectWhenUp(const std::string& sock) {
  for (int i = 0; i < 500; ++i) {
    auto c = CacheClient::Connect(sock, "cli test");
    if (c.ok()) return std::move(c).value();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  FAIL("no cache server on " << sock);
  return nullptr;
}

std::string Config(const std::string& dir) {
  const std::string path = dir + "/cache.yaml";
  testing::WriteTextFile(path,
                         "dataset:\n"
                         "  data_folder: " +
                             dir +
                             "\n"
                             "storage:\n"
                             "  storage_type: tiered\n"
                             "  tiered_source: slow\n"
                             "  slow_latency_us: 300\n"
                             "  slow_bandwidth_mib_s: 50\n"
                             "  cache_policy: lru\n"
                             "  tiers:\n"
                             "    - {type: memory, capacity_bytes: 1MiB}\n");
  return path;
}

TEST_CASE("dlio-run cache-serve: serves copies, stops on SIGTERM, writes its statistics") {
  TempDir dir;
  const std::string config = Config(dir.path());
  std::vector<std::string> files;
  for (int i = 0; i < 3; ++i) {
    files.push_back(dir / StrCat("f", i));
    testing::WriteTextFile(files.back(), ContentOf(StrCat("f", i), 20000 + i));
  }
  const std::string sock = dir / "s.sock", stats = dir / "stats.json";
  const pid_t pid =
      Spawn({"cache-serve", config, "--socket", sock, "--stats-json", stats}, dir / "log");
  auto c = ConnectWhenUp(sock);
  CHECK(c->hello().source_latency_ns == 300000);
  CHECK(c->hello().source_bytes_per_s == 50ull * 1048576);
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 3; ++i) {
      auto o = c->Open(files[i]);
      REQUIRE(o.ok());
      REQUIRE(o->reply.tier == 0);
      std::string got(o->reply.size, '\0');
      REQUIRE(::pread(o->fd.get(), got.data(), got.size(), 0) == static_cast<ssize_t>(got.size()));
      CHECK(got == ContentOf(StrCat("f", i), 20000 + i));
      REQUIRE(c->ReadReport(files[i], o->reply.tier, got.size()).ok());
    }
  }
  auto missing = c->Open(dir / "missing");
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.status().message(), Catch::Contains(dir / "missing"));
  // Only the files beneath the data directory (the config's dataset.data_folder by default).
  auto outside = c->Open("/etc/passwd");
  REQUIRE_FALSE(outside.ok());
  CHECK_THAT(outside.status().message(), Catch::Contains("refused"));
  REQUIRE(c->Stats(false).ok());  // every report is in before the stop
  ::kill(pid, SIGTERM);
  CHECK(WaitExit(pid) == 0);
  const auto j = nlohmann::json::parse(testing::ReadTextFile(stats));
  CHECK(j["tiers"][0]["hits"] == 3);
  CHECK(j["tiers"][0]["misses"] == 3);
  CHECK(j["tiers"][0]["files_copied"] == 3);
  CHECK(j["tiers"][0]["bytes_served"] == 2 * (20000 + 20001 + 20002));
  const std::string log = testing::ReadTextFile(dir / "log");
  CHECK_THAT(log, Catch::Contains("memory"));  // the per-level table
  struct stat st {};
  CHECK(::lstat(sock.c_str(), &st) != 0);  // the socket is gone
  auto late = c->Open(files[0]);
  REQUIRE_FALSE(late.ok());
  CHECK_THAT(late.status().message(), Catch::Contains(sock));
}

TEST_CASE("dlio-run cache-serve: --data-dir, --allow-group and --stats-json are checked first") {
  TempDir dir;
  const std::string config = Config(dir.path());
  const std::string sock = dir / "s";
  CHECK(WaitExit(Spawn({"cache-serve", config, "--socket", sock, "--data-dir", dir / "nope"},
                       dir / "log1")) == 2);
  CHECK_THAT(testing::ReadTextFile(dir / "log1"), Catch::Contains("--data-dir " + dir / "nope"));
  CHECK(WaitExit(
            Spawn({"cache-serve", config, "--socket", sock, "--allow-group", "no-such-group-dlio"},
                  dir / "log2")) == 2);
  CHECK_THAT(testing::ReadTextFile(dir / "log2"), Catch::Contains("--allow-group"));
  // A file that is not an earlier --stats-json is never replaced (as analyze's -o).
  testing::WriteTextFile(dir / "notes.json", "{\"mine\": 1}");
  CHECK(
      WaitExit(Spawn({"cache-serve", config, "--socket", sock, "--stats-json", dir / "notes.json"},
                     dir / "log3")) == 2);
  CHECK_THAT(testing::ReadTextFile(dir / "log3"), Catch::Contains("not replaced"));
  CHECK(testing::ReadTextFile(dir / "notes.json") == "{\"mine\": 1}");
  struct stat st {};
  CHECK(::lstat(sock.c_str(), &st) != 0);  // refused before listening
  // An earlier --stats-json is replaced.
  const std::string stats = dir / "stats.json";
  for (int run = 0; run < 2; ++run) {
    const pid_t pid =
        Spawn({"cache-serve", config, "--socket", sock, "--stats-json", stats}, dir / "log4");
    ConnectWhenUp(sock);
    ::kill(pid, SIGTERM);
    CHECK(WaitExit(pid) == 0);
    CHECK(nlohmann::json::parse(testing::ReadTextFile(stats)).contains("tiers"));
  }
}

TEST_CASE("dlio-run cache-serve: refuses a non-tiered storage and a path that is not a socket") {
  TempDir dir;
  const std::string config = Config(dir.path());
  testing::WriteTextFile(dir / "plain", "data");
  CHECK(WaitExit(Spawn({"cache-serve", config, "--socket", dir / "plain"}, dir / "log1")) == 1);
  CHECK_THAT(testing::ReadTextFile(dir / "log1"), Catch::Contains(dir / "plain"));
  CHECK(testing::ReadTextFile(dir / "plain") == "data");
  CHECK(WaitExit(Spawn(
            {"cache-serve", config, "--socket", dir / "s", "--set", "storage.storage_type=posix"},
            dir / "log2")) == 2);
  CHECK_THAT(testing::ReadTextFile(dir / "log2"),
             Catch::Contains("storage.storage_type is 'posix', which keeps no cache"));
  testing::WriteTextFile(dir / "future", "relative/path\n");
  CHECK(WaitExit(Spawn({"cache-serve", config, "--socket", dir / "s", "--future", dir / "future"},
                       dir / "log3")) == 2);
  CHECK_THAT(testing::ReadTextFile(dir / "log3"), Catch::Contains("line 1"));
}

}  // namespace
}  // namespace dlio
