// CacheServer (dlio/cache_server.h) against clients in threads and in forked processes.
#include "dlio/cache_server.h"

#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "cache/cache_client.h"
#include "cache_test_util.h"
#include "core/fnv_hash.h"
#include "storage/slow_options.h"

namespace dlio {
namespace {

using cache_internal::CacheClient;
using testing::CacheFixture;
using testing::ContentOf;
using testing::MemoryTier;
using testing::TempDir;
using json = nlohmann::json;

// The source's bytes of `path` when the server says tier -1, else the copy's.
std::string ReadOpened(CacheClient::Opened& o, const std::string& path) {
  if (o.reply.tier < 0) return testing::ReadTextFile(path);
  return testing::PreadWhole(o.fd.get(), o.reply.size);
}

struct Served {
  CacheFixture f;
  TempDir sock_dir;
  CacheFixture::Cached cache;
  std::unique_ptr<CacheServer> server;
  std::vector<std::string> logs;
  std::mutex log_mu;

  // Serves the files of f.dir and of `more_dirs`.
  Served(std::vector<CacheTierOptions> tiers, CachePolicyKind policy,
         std::vector<std::string> future = {}, std::vector<std::string> more_dirs = {}) {
    cache = f.Make(std::move(tiers), policy);
    CacheServerOptions o;
    o.socket_path = sock_dir / "cache.sock";
    o.data_dirs = {f.dir.path()};
    o.data_dirs.insert(o.data_dirs.end(), more_dirs.begin(), more_dirs.end());
    o.default_future = std::move(future);
    o.log = [this](const std::string& line) {
      std::lock_guard<std::mutex> lock(log_mu);
      logs.push_back(line);
    };
    auto s = CacheServer::Start(cache.cache, std::move(o));
    REQUIRE(s.ok());
    server = std::move(s).value();
  }
  std::unique_ptr<CacheClient> Connect(const std::string& name = "test") {
    auto c = CacheClient::Connect(server->socket_path(), name);
    REQUIRE(c.ok());
    return std::move(c).value();
  }
  json Stats(CacheClient* c) {
    auto text = c->Stats(false);
    REQUIRE(text.ok());
    return json::parse(*text);
  }
};

TEST_CASE("cache server: clients in threads read the source's bytes, one copy per file") {
  Served s({MemoryTier(64 << 20)}, CachePolicyKind::kLru);
  std::vector<std::string> paths;
  for (int i = 0; i < 12; ++i) paths.push_back(s.f.Put(StrCat("f", i), 1000 + 37 * i));
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      auto c = CacheClient::Connect(s.server->socket_path(), StrCat("thread ", t));
      if (!c.ok()) {
        ++bad;
        return;
      }
      for (size_t k = 0; k < paths.size(); ++k) {
        const size_t i = (k + 3 * t) % paths.size();
        auto o = (*c)->Open(paths[i]);
        if (!o.ok() || o->reply.tier != 0 ||
            ReadOpened(*o, paths[i]) != ContentOf(StrCat("f", i), 1000 + 37 * i)) {
          ++bad;
        }
        if (o.ok()) (void)(*c)->ReadReport(paths[i], o->reply.tier, o->reply.size);
      }
      // A read report has no reply: a call that has one, on the same connection, returns once
      // the server has handled the reports before it (a loaded host lost one: 56,472 bytes).
      if (!(*c)->Stats(false).ok()) ++bad;
    });
  }
  for (auto& t : threads) t.join();
  CHECK(bad == 0);
  auto c = s.Connect();
  const json stats = s.Stats(c.get());
  CHECK(stats["tiers"][0]["files_copied"] == paths.size());  // no file copied twice
  CHECK(stats["tiers"][0]["hits"].get<uint64_t>() + stats["source"]["hits"].get<uint64_t>() ==
        4 * paths.size());
  uint64_t bytes = 0;
  for (int i = 0; i < 12; ++i) bytes += 4 * (1000 + 37 * i);
  CHECK(stats["tiers"][0]["bytes_served"] == bytes);  // the clients' read reports
  CHECK(s.server->clients_seen() == 5);
}

TEST_CASE("cache server: lru hits and misses of a known sequence, as computed by hand") {
  Served s({MemoryTier(3000)}, CachePolicyKind::kLru);
  for (const char* n : {"A", "B", "C", "D"}) s.f.Put(n, 1000);
  auto c = s.Connect();
  // A B C miss; A hits; D evicts B (least recent), B evicts C, A hits.
  for (const char* n : {"A", "B", "C", "A", "D", "B", "A"}) {
    auto o = c->Open(s.f.dir / n);
    REQUIRE(o.ok());
    CHECK(o->reply.tier == 0);
    CHECK(ReadOpened(*o, s.f.dir / n) == ContentOf(n, 1000));
  }
  const json stats = s.Stats(c.get());
  const json& t = stats["tiers"][0];
  CHECK(t["hits"] == 2);
  CHECK(t["misses"] == 5);
  CHECK(t["read_through"] == 5);
  CHECK(t["evictions"] == 2);
  CHECK(t["files_copied"] == 5);
  CHECK(stats["source"]["hits"] == 5);
  auto taken = c->Stats(true);
  REQUIRE(taken.ok());
  CHECK(s.Stats(c.get())["tiers"][0]["hits"] == 0);  // kTakeStats reset the counters
}

TEST_CASE("cache server: clients in forked processes read byte-identical copies") {
  Served s({MemoryTier(64 << 20)}, CachePolicyKind::kLru);
  std::vector<std::string> paths;
  for (int i = 0; i < 8; ++i) paths.push_back(s.f.Put(StrCat("g", i), 5000 + i));
  std::vector<pid_t> children;
  for (int p = 0; p < 3; ++p) {
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      auto c = CacheClient::Connect(s.server->socket_path(), StrCat("pid ", ::getpid()));
      if (!c.ok()) ::_exit(2);
      for (int i = 0; i < 8; ++i) {
        auto o = (*c)->Open(paths[i]);
        if (!o.ok() || o->reply.tier != 0) ::_exit(3);
        if (Fnv1a64(testing::PreadWhole(o->fd.get(), o->reply.size)) !=
            Fnv1a64(ContentOf(StrCat("g", i), 5000 + i))) {
          ::_exit(4);
        }
      }
      ::_exit(0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  CHECK(s.cache->Stats().tiers[0].files_copied == paths.size());
}

TEST_CASE("cache server: future lists merge by position") {
  const std::vector<std::string> a = {"a1", "a2", "a3"}, b = {"b1"}, c = {"c1", "c2"};
  CHECK(MergeFutureLists({{&a, 0}, {&b, 0}, {&c, 0}}) ==
        std::vector<std::string>{"a1", "b1", "c1", "a2", "c2", "a3"});
  CHECK(MergeFutureLists({{&a, 1}, {&b, 1}, {&c, 0}}) ==
        std::vector<std::string>{"a2", "c1", "a3", "c2"});
  CHECK(MergeFutureLists({}).empty());
}

TEST_CASE("cache server: clairvoyant prefetches the merged kFuture lists") {
  Served s({MemoryTier(64 << 20)}, CachePolicyKind::kClairvoyant);
  std::vector<std::string> mine, theirs;
  for (int i = 0; i < 3; ++i) mine.push_back(s.f.Put(StrCat("m", i), 2000));
  for (int i = 0; i < 2; ++i) theirs.push_back(s.f.Put(StrCat("t", i), 2000));
  auto c1 = s.Connect("one");
  auto c2 = s.Connect("two");
  REQUIRE(c1->Future(mine).ok());
  REQUIRE(c2->Future(theirs).ok());
  s.cache->WaitIdle();
  CHECK(s.cache->Stats().tiers[0].files_copied == 5);  // both lists prefetched
  for (const auto& p : mine) {
    auto o = c1->Open(p);
    REQUIRE(o.ok());
    CHECK(o->reply.tier == 0);
    CHECK((o->reply.flags & cache_wire::kOpenReadThrough) == 0);  // a prefetched hit
  }
  CHECK(s.cache->Stats().tiers[0].hits == 3);
}

TEST_CASE("cache server: --future serves clients that send no list") {
  CacheFixture g;
  std::vector<std::string> paths;
  for (int i = 0; i < 3; ++i) paths.push_back(g.Put(StrCat("x", i), 1500));
  Served s({MemoryTier(64 << 20)}, CachePolicyKind::kClairvoyant, paths, {g.dir.path()});
  s.cache->WaitIdle();
  CHECK(s.cache->Stats().tiers[0].files_copied == 3);
}

TEST_CASE("cache server: hello tells the source's emulated cost") {
  CacheFixture f;
  StorageOptions slow;
  slow.backends.Get<SlowOptions>().latency_us = 250;
  slow.backends.Get<SlowOptions>().bandwidth_mib_s = 100;
  auto source = NewSlowStorage(NewPosixStorage(StorageOptions()), slow);
  CacheOptions o;
  o.tiers = {MemoryTier(1 << 20)};
  auto storage = NewTieredStorage(std::move(source), o);
  REQUIRE(storage.ok());
  TempDir dir;
  CacheServerOptions so;
  so.socket_path = dir / "s";
  so.data_dirs = {f.dir.path()};
  so.source_cost = (*storage)->emulated_cost();
  auto server = CacheServer::Start(CacheOf(storage->get()), so);
  REQUIRE(server.ok());
  auto c = CacheClient::Connect(so.socket_path, "hello");
  REQUIRE(c.ok());
  CHECK((*c)->hello().source_latency_ns == 250000);
  CHECK((*c)->hello().source_bytes_per_s == 100ull * 1048576);
  CHECK((*c)->hello().tiers == 1);
  CHECK((*c)->hello().policy == static_cast<uint32_t>(CachePolicyKind::kLru));
  CHECK((*c)->hello().client_index == 0);
}

TEST_CASE("cache server: a missing source file is an error naming it") {
  Served s({MemoryTier(1 << 20)}, CachePolicyKind::kLru);
  auto c = s.Connect();
  const std::string missing = s.f.dir / "missing.bin";
  auto o = c->Open(missing);
  REQUIRE_FALSE(o.ok());
  CHECK(o.status().code() == StatusCode::kNotFound);
  CHECK_THAT(o.status().message(), Catch::Contains(missing));
  const std::string ok = s.f.Put("ok", 10);
  CHECK(c->Open(ok).ok());  // the connection goes on
}

// A raw connection to `path` that sends `bytes`; returns what recv says next (0: closed).
ssize_t SendRaw(const std::string& path, const std::string& bytes) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  path.copy(addr.sun_path, path.size());
  REQUIRE(::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0);
  REQUIRE(::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
  char buf[64];
  const ssize_t r = ::recv(fd, buf, sizeof(buf), 0);
  ::close(fd);
  return r;
}

TEST_CASE("cache server: a malformed message closes that connection only, with a log line") {
  Served s({MemoryTier(1 << 20)}, CachePolicyKind::kLru);
  const std::string file = s.f.Put("f", 100);
  auto good = s.Connect("good");
  CHECK(SendRaw(s.server->socket_path(), std::string(16, 'z')) == 0);  // bad magic
  cache_wire::WireHeader h;
  h.op = static_cast<uint16_t>(cache_wire::Op::kOpen);
  h.payload_bytes = 8;
  std::string relative(reinterpret_cast<const char*>(&h), sizeof(h));
  relative += "relative";
  CHECK(SendRaw(s.server->socket_path(), relative) == 0);  // not an absolute path
  h.op = 999;
  h.payload_bytes = 0;
  CHECK(SendRaw(s.server->socket_path(), std::string(reinterpret_cast<const char*>(&h),
                                                     sizeof(h))) == 0);  // unknown op
  auto o = good->Open(file);
  REQUIRE(o.ok());
  CHECK(ReadOpened(*o, file) == ContentOf("f", 100));
  std::lock_guard<std::mutex> lock(s.log_mu);
  REQUIRE(s.logs.size() == 3);
  CHECK_THAT(s.logs[0], Catch::Contains("malformed"));
  CHECK_THAT(s.logs[1], Catch::Contains("not absolute"));
  CHECK_THAT(s.logs[2], Catch::Contains("unknown op 999"));
}

TEST_CASE("cache server: socket paths it refuses, and a dead server's socket it replaces") {
  CacheFixture f;
  auto cache = f.Make({MemoryTier(1 << 20)}, CachePolicyKind::kLru);
  TempDir dir;
  CacheServerOptions o;
  o.socket_path = dir / "regular";
  o.data_dirs = {f.dir.path()};
  testing::WriteTextFile(o.socket_path, "keep me");
  auto refused = CacheServer::Start(cache.cache, o);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.status().message(), Catch::Contains(o.socket_path));
  CHECK_THAT(refused.status().message(), Catch::Contains("not a socket"));
  CHECK(testing::ReadTextFile(o.socket_path) == "keep me");

  o.socket_path = dir / std::string(200, 'x');
  CHECK(CacheServer::Start(cache.cache, o).status().code() == StatusCode::kInvalidArgument);

  o.socket_path = dir / "live";
  auto live = CacheServer::Start(cache.cache, o);
  REQUIRE(live.ok());
  auto second = CacheServer::Start(cache.cache, o);
  REQUIRE_FALSE(second.ok());
  CHECK_THAT(second.status().message(), Catch::Contains("another server is listening"));
  live->reset();
  struct stat st {};
  CHECK(::lstat(o.socket_path.c_str(), &st) != 0);  // the server removed its socket

  // A socket nobody listens on (a server that died without cleaning up) is replaced.
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  o.socket_path.copy(addr.sun_path, o.socket_path.size());
  REQUIRE(::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0);
  ::close(fd);
  auto replaced = CacheServer::Start(cache.cache, o);
  REQUIRE(replaced.ok());
  CHECK(CacheClient::Connect(o.socket_path, "after").ok());
}

TEST_CASE("cache server: a client of a server that stopped or was killed gets an error") {
  Served s({MemoryTier(1 << 20)}, CachePolicyKind::kLru);
  const std::string file = s.f.Put("f", 100);
  auto c = s.Connect();
  const std::string sock = s.server->socket_path();
  s.server.reset();
  auto o = c->Open(file);
  REQUIRE_FALSE(o.ok());
  CHECK_THAT(o.status().message(), Catch::Contains(sock));
  auto again = CacheClient::Connect(sock, "late");
  REQUIRE_FALSE(again.ok());
  CHECK_THAT(again.status().message(), Catch::Contains(sock));

  // A server process killed with SIGKILL.
  TempDir dir;
  const std::string killed_sock = dir / "k.sock";
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    CacheServerOptions o;
    o.socket_path = killed_sock;
    o.data_dirs = {s.f.dir.path()};
    auto server = CacheServer::Start(s.cache.cache, o);
    const char ok = server.ok() ? 'y' : 'n';
    (void)!::write(ready[1], &ok, 1);
    ::pause();
    ::_exit(0);
  }
  char ok = 0;
  REQUIRE(::read(ready[0], &ok, 1) == 1);
  REQUIRE(ok == 'y');
  auto k = CacheClient::Connect(killed_sock, "victim");
  REQUIRE(k.ok());
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  auto after = (*k)->Open(file);
  REQUIRE_FALSE(after.ok());
  CHECK_THAT(after.status().message(), Catch::Contains(killed_sock));
  ::close(ready[0]);
  ::close(ready[1]);
}

}  // namespace
}  // namespace dlio

namespace dlio {
namespace {

TEST_CASE("client storage: reads through the server's copies and the source, reported back") {
  Served s({MemoryTier(10000)}, CachePolicyKind::kLru);
  const std::string small = s.f.Put("small", 6000), big = s.f.Put("big", 20000);
  auto storage = NewTieredClientStorage(NewPosixStorage(StorageOptions()), s.server->socket_path(),
                                        "client storage", true);
  REQUIRE(storage.ok());
  TieredCache* cache = CacheOf(storage->get());
  REQUIRE(cache != nullptr);
  CHECK(cache->policy() == CachePolicyKind::kLru);
  CHECK_FALSE(cache->uses_future_accesses());
  for (int round = 0; round < 2; ++round) {
    CHECK(Fnv1a64(testing::ReadAll(storage->get(), small, 1000)) ==
          Fnv1a64(ContentOf("small", 6000)));
    CHECK(testing::ReadAll(storage->get(), big, 7000) == ContentOf("big", 20000));  // too big
  }
  const CacheStats stats = cache->Stats();  // the server's, over the socket
  REQUIRE(stats.tiers.size() == 1);
  CHECK(stats.tiers[0].hits == 1);
  CHECK(stats.tiers[0].files_copied == 1);
  CHECK(stats.tiers[0].bytes_served == 2 * 6000);
  CHECK(stats.source.hits == 3);  // small's first open, big's two
  CHECK(stats.source.bytes_served == 2 * 20000);
  CHECK(stats.tiers[0].skipped_too_big == 2);
  // A write through the client drops the server's copy; the next open copies the new bytes.
  {
    auto out = (*storage)->Open(small, OpenMode::kWrite);
    REQUIRE(out.ok());
    const std::string v2 = ContentOf("small", 6000, 2);
    REQUIRE((*out)->WriteAt(0, v2.data(), v2.size()).ok());
    REQUIRE((*out)->Close().ok());
  }
  CHECK(testing::ReadAll(storage->get(), small) == ContentOf("small", 6000, 2));
  CHECK(s.cache->Stats().tiers[0].files_copied == 2);
  auto quiet = NewTieredClientStorage(NewPosixStorage(StorageOptions()), s.server->socket_path(),
                                      "no stats", false);
  REQUIRE(quiet.ok());
  CHECK(CacheOf(quiet->get())->Stats().tiers.empty());  // one client a node reports
}

}  // namespace
}  // namespace dlio
