// libdlio_cache_preload.so against the real server, `dlio-run cache-serve`: the bytes of a plain
// run, the server's statistics per run (kTakeStats: lru misses, then hits), the slow source's cost
// on the program's own reads, and a server killed mid-run.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cache/cache_wire.h"
#include "test_util.h"

extern char** environ;

namespace {

namespace wire = dlio::cache_wire;
using dlio::testing::RunCommand;
using dlio::testing::TempDir;
using nlohmann::json;

const std::string kLib = DLIO_CACHE_PRELOAD_LIB;
const std::string kProgram = DLIO_CACHE_READ_PROGRAM;
const std::string kDlioRun = DLIO_BINARY_DIR "/apps/dlio-run/dlio-run";

// Bytes 1..255 with a newline every 61 bytes (as cache_preload_test.cc's files).
void WriteData(const std::string& path, size_t size) {
  std::string data(size, '\0');
  for (size_t i = 0; i < size; ++i) {
    data[i] = i % 61 == 60 ? '\n' : static_cast<char>(1 + (i * 13) % 255);
  }
  dlio::testing::WriteTextFile(path, data);
}

// `dlio-run cache-serve` on a config of its own, stopped (SIGTERM) by the destructor.
class Server {
 public:
  Server(const TempDir& tmp, const std::string& data, const std::string& policy,
         const std::string& capacity, int latency_us)
      : socket_(tmp / "cache.sock"), stats_(tmp / "stats.json"), log_(tmp / "server.log") {
    const std::string config = tmp / "cache.yaml";
    dlio::testing::WriteTextFile(
        config,
        "dataset:\n  data_folder: " + data +
            "\nstorage:\n  storage_type: tiered\n  tiered_source: slow\n"
            "  slow_latency_us: " +
            std::to_string(latency_us) + "\n  slow_bandwidth_mib_s: 0\n  cache_policy: " + policy +
            "\n  tiers:\n    - {type: memory, capacity_bytes: " + capacity + ", threads: 2}\n");
    std::vector<std::string> args = {kDlioRun, "cache-serve",  config, "--socket",
                                     socket_,  "--stats-json", stats_};
    // A server that asks which directory its clients may open (--data-dir) is told.
    if (RunCommand("'" + kDlioRun + "' cache-serve --help").output.find("--data-dir") !=
        std::string::npos) {
      args.insert(args.end(), {"--data-dir", data});
    }
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    REQUIRE(posix_spawn(&pid_, kDlioRun.c_str(), &actions, nullptr, argv.data(), environ) == 0);
    posix_spawn_file_actions_destroy(&actions);
    for (int i = 0; i < 200 && !std::filesystem::exists(socket_); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    INFO(dlio::testing::ReadTextFile(log_));
    REQUIRE(std::filesystem::exists(socket_));
  }
  ~Server() { Stop(); }

  // SIGTERM (`kill` true: SIGKILL) and wait; the exit status (-1 for a signal).
  int Stop(bool kill = false) {
    if (pid_ <= 0) return status_;
    ::kill(pid_, kill ? SIGKILL : SIGTERM);
    ::kill(pid_, SIGCONT);  // a stopped server acts on the signal
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    status_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return status_;
  }

  // The statistics since the last call (kTakeStats on a connection of the test's own).
  json TakeStats() {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr = {};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", socket_.c_str());
    REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    const std::string name = "test";
    REQUIRE(wire::SendMessage(fd, wire::Op::kHello, name.data(), name.size()) == 0);
    wire::WireHeader h;
    REQUIRE(wire::RecvHeader(fd, &h) == 0);
    std::string payload(h.payload_bytes, '\0');
    REQUIRE(wire::RecvAll(fd, payload.data(), payload.size()) == 0);
    REQUIRE(wire::SendMessage(fd, wire::Op::kTakeStats, nullptr, 0) == 0);
    REQUIRE(wire::RecvHeader(fd, &h) == 0);
    REQUIRE(h.op == static_cast<uint16_t>(wire::Op::kAck));
    payload.assign(h.payload_bytes, '\0');
    REQUIRE(wire::RecvAll(fd, payload.data(), payload.size()) == 0);
    ::close(fd);
    wire::Ack ack;
    std::memcpy(&ack, payload.data(), sizeof ack);
    REQUIRE(ack.error == 0);
    return json::parse(payload.substr(sizeof ack));
  }

  // SIGSTOP: the server keeps its socket and connections and answers nothing.
  void Pause() { ::kill(pid_, SIGSTOP); }

  const std::string& socket() const { return socket_; }
  std::string Log() const { return dlio::testing::ReadTextFile(log_); }

 private:
  std::string socket_;
  std::string stats_;
  std::string log_;
  pid_t pid_ = -1;
  int status_ = -1;
};

struct Fixture {
  TempDir tmp;
  std::string data = tmp / "data";
  std::string a = data + "/a.bin";
  std::string b = data + "/b.bin";
  Fixture() {
    std::filesystem::create_directories(data);
    WriteData(a, 100000);
    WriteData(b, 30000);
  }
  dlio::testing::CommandResult Preloaded(const Server& server, const std::string& args,
                                         const std::string& env = "") {
    return RunCommand("env LD_PRELOAD='" + kLib + "' DLIO_CACHE_SOCKET='" + server.socket() +
                      "' DLIO_CACHE_DATA_DIRS='" + data + "' " + env + " '" + kProgram + "' " +
                      args);
  }
};

// The output without its one warning line (which must be there).
std::string WithoutTheWarning(const std::string& output, const std::string& warning) {
  const size_t at = output.find(warning);
  REQUIRE(at != std::string::npos);
  CHECK(output.find("dlio cache: warning:", at + 1) == std::string::npos);  // one line
  std::string without = output;
  without.erase(at, without.find('\n', at) + 1 - at);
  return without;
}

TEST_CASE("cache-serve + preload: lru serves every way of reading, misses then all hits") {
  Fixture f;
  Server server(f.tmp, f.data, "lru", "1MiB", 0);
  const std::string args = "sum '" + f.a + "' '" + f.b + "'";
  const auto plain = RunCommand("'" + kProgram + "' " + args);
  REQUIRE(plain.exit_code == 0);
  server.TakeStats();
  const auto first = f.Preloaded(server, args);
  INFO(first.output << server.Log());
  REQUIRE(first.exit_code == 0);
  CHECK(first.output == plain.output);
  const json s1 = server.TakeStats();
  INFO(s1.dump());
  // 8 opens per file; lru copies each file on its first open (a read-through miss).
  CHECK(s1.at("tiers").at(0).at("misses") == 2);
  CHECK(s1.at("tiers").at(0).at("read_through") == 2);
  CHECK(s1.at("tiers").at(0).at("hits") == 14);
  const auto second = f.Preloaded(server, args);
  REQUIRE(second.exit_code == 0);
  CHECK(second.output == plain.output);
  const json s2 = server.TakeStats();
  INFO(s2.dump());
  CHECK(s2.at("tiers").at(0).at("misses") == 0);
  CHECK(s2.at("tiers").at(0).at("hits") == 16);
  CHECK(server.Stop() == 0);
}

TEST_CASE("cache-serve + preload: the program's reads of a slow source cost 5 ms per call") {
  Fixture f;
  // No tier holds a file (1 byte): every open reads the source.
  Server server(f.tmp, f.data, "monarch", "1", 5000);
  const auto run = f.Preloaded(server, "timed '" + f.a + "'");
  INFO(run.output << server.Log());
  REQUIRE(run.exit_code == 0);
  char path[4096];
  long long elapsed_ns = 0;
  int calls = 0;
  unsigned long long bytes = 0;
  REQUIRE(std::sscanf(run.output.c_str(), "timed %4095s %lld %d %llu", path, &elapsed_ns, &calls,
                      &bytes) == 4);
  CHECK(bytes == 100000);
  CHECK(calls == 26);
  CHECK(elapsed_ns >= calls * 5000000LL);
}

TEST_CASE("cache-serve + preload: a server killed mid-run leaves correct bytes and a warning") {
  Fixture f;
  Server server(f.tmp, f.data, "monarch", "1", 2000);
  const std::string args = "passes 12 '" + f.a + "' '" + f.b + "'";
  const auto plain = RunCommand("'" + kProgram + "' " + args);
  // 12 passes of 26 + 9 calls of 2 ms: at least 0.8 s; the server dies after 0.3 s.
  std::thread killer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    server.Stop(/*kill=*/true);
  });
  const auto run = f.Preloaded(server, args);
  killer.join();
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  const std::string warning = "dlio cache: warning: cache server " + server.socket();
  CHECK(WithoutTheWarning(run.output, warning) == plain.output);
}

TEST_CASE("cache-serve + preload: a stopped server (SIGSTOP) costs one timeout, no hang") {
  Fixture f;
  // No tier holds a file and the source costs 2 ms per call: every pass asks the server again.
  Server server(f.tmp, f.data, "monarch", "1", 2000);
  const std::string args = "passes 12 '" + f.a + "' '" + f.b + "'";
  const auto plain = RunCommand("'" + kProgram + "' " + args);
  REQUIRE(plain.exit_code == 0);
  // Stopped before the program starts (its hello waits), or mid-run (an open waits): one wait of
  // DLIO_CACHE_TIMEOUT_MS (the default, 10 s, when unset), then the source.
  const bool mid_run = GENERATE(false, true);
  INFO("stopped " << (mid_run ? "mid-run" : "before the program starts"));
  if (!mid_run) server.Pause();
  std::thread stopper([&] {
    if (!mid_run) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    server.Pause();
  });
  const auto t0 = std::chrono::steady_clock::now();
  const auto run = f.Preloaded(server, args, mid_run ? "" : "DLIO_CACHE_TIMEOUT_MS=2000");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  stopper.join();
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  const std::string warning = "dlio cache: warning: cache server " + server.socket() + ": ";
  CHECK(WithoutTheWarning(run.output, warning) == plain.output);
  CHECK(run.output.find(mid_run ? "no answer within 10000 ms, DLIO_CACHE_TIMEOUT_MS"
                                : "no hello (no answer within 2000 ms, DLIO_CACHE_TIMEOUT_MS)") !=
        std::string::npos);
  CHECK(seconds >= (mid_run ? 10 : 2));
  CHECK(seconds < 90);  // well under the test's timeout, with a CPU hog beside it
}

}  // namespace
