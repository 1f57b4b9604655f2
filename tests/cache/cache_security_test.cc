// The cache server against a hostile or careless local client speaking the wire protocol itself
// (docs/caching.md, "Trust model"): paths outside the data directories, descriptors sent to the
// server, payloads announced and never sent, statistics a client tries to wrap, its name in logs.
// Cases that need root or a kernel feature exit 77 (ctest's SKIP_RETURN_CODE) when they cannot.
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "cache/beneath.h"
#include "cache/cache_client.h"
#include "cache/cache_wire.h"
#include "cache_security_util.h"

namespace dlio {
namespace {

namespace wire = cache_wire;
using testing::CacheFixture;
using testing::ContentOf;
using testing::MemoryTier;
using testing::RawClient;
using testing::SecuredServer;
using testing::TempDir;

TEST_CASE("cache server: refuses paths outside its data directories, as the kernel resolves them") {
  SecuredServer s;
  const std::string inside = s.f.Put("inside", 3000);
  TempDir outside;
  const std::string secret = outside / "secret";
  testing::WriteTextFile(secret, "key material");
  REQUIRE(::symlink(secret.c_str(), (s.f.dir / "escape").c_str()) == 0);
  REQUIRE(::symlink("inside", (s.f.dir / "alias").c_str()) == 0);
  REQUIRE(::symlink(outside.path().c_str(), (s.f.dir / "outdir").c_str()) == 0);
  REQUIRE(::mkfifo((s.f.dir / "fifo").c_str(), 0600) == 0);
  REQUIRE(::mkdir((s.f.dir / "sub").c_str(), 0700) == 0);
  RawClient c(s.server->socket_path());
  c.Hello("prober");
  for (const std::string& path :
       {std::string("/etc/passwd"), std::string("/proc/self/environ"), s.f.dir / ("../" + secret),
        s.f.dir / (".." + outside.path() + "/secret"), s.f.dir / "escape",
        s.f.dir / "outdir/secret", s.f.dir / ("sub/../.." + s.f.dir.path() + "/escape"),
        s.f.dir / "fifo", s.f.dir / "sub"}) {
    INFO(path);
    const RawClient::Reply r = c.Open(path);
    CHECK(r.error == EACCES);
    CHECK(r.fd.get() < 0);
    CHECK_THAT(r.message, Catch::Contains("refused"));
  }
  const RawClient::Reply missing = c.Open(s.f.dir / "missing");
  CHECK(missing.error == ENOENT);
  // Within the folder, `..` and relative links are resolved as the kernel does.
  for (const std::string& path :
       {inside, s.f.dir / "alias", s.f.dir / "sub/../inside", s.f.dir / "./inside"}) {
    INFO(path);
    const RawClient::Reply r = c.Open(path);
    REQUIRE(r.error == 0);
    REQUIRE(r.tier == 0);
    CHECK(testing::PreadWhole(r.fd.get(), r.size) == ContentOf("inside", 3000));
  }
  // One log line for the client's refusals, and its total when it leaves.
  c.Close();
  s.WaitForLog("opens refused in all");
  CHECK(s.CountLogs("refused:") == 1);
}

TEST_CASE("cache server: a kFuture list never makes the cache read outside its data directories") {
  SecuredServer s(CachePolicyKind::kClairvoyant, /*confined=*/true);
  TempDir outside;
  testing::WriteTextFile(outside / "secret", std::string(5000, 's'));
  REQUIRE(::symlink((outside / "secret").c_str(), (s.f.dir / "escape").c_str()) == 0);
  const std::string inside = s.f.Put("inside", 4000);
  auto c = s.Connect();
  REQUIRE(c->Future({outside / "secret", s.f.dir / "escape",
                     s.f.dir / (".." + outside.path() + "/secret"), inside})
              .ok());
  s.cached->WaitIdle();
  const CacheStats stats = s.cached->Stats();
  CHECK(stats.tiers[0].files_copied == 1);  // the file inside only
  CHECK(stats.tiers[0].occupancy_bytes == 4000);
}

TEST_CASE("confined source: reads the files beneath its folders only, and nothing else") {
  CacheFixture f;
  const std::string inside = f.Put("inside", 100);
  TempDir outside;
  testing::WriteTextFile(outside / "secret", "key");
  REQUIRE(::symlink((outside / "secret").c_str(), (f.dir / "escape").c_str()) == 0);
  auto source = NewConfinedCacheSource(NewPosixStorage(StorageOptions()), {f.dir.path()}, "key");
  REQUIRE(source.ok());
  CHECK(testing::ReadAll(source->get(), inside) == ContentOf("inside", 100));
  for (const std::string& path :
       {f.dir / "escape", outside / "secret", std::string("/etc/passwd")}) {
    INFO(path);
    CHECK((*source)->Open(path, OpenMode::kRead).status().code() ==
          StatusCode::kFailedPrecondition);
    CHECK_FALSE((*source)->FileSize(path).ok());
  }
  CHECK_FALSE((*source)->Open(inside, OpenMode::kWrite).ok());
  CHECK_FALSE((*source)->Remove(inside).ok());
  CHECK(testing::ReadTextFile(inside) == ContentOf("inside", 100));
  CHECK_FALSE(NewConfinedCacheSource(NewPosixStorage(StorageOptions()), {"relative"}, "key").ok());
}

TEST_CASE("beneath: the O_NOFOLLOW walk (kernels without openat2) stays beneath its folder") {
  TempDir dir;
  testing::WriteTextFile(dir / "a", "a");
  REQUIRE(::mkdir((dir / "d").c_str(), 0700) == 0);
  testing::WriteTextFile(dir / "d/b", "b");
  REQUIRE(::symlink("a", (dir / "link").c_str()) == 0);
  OwnedFd root(::open(dir.path().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  REQUIRE(root.get() >= 0);
  OwnedFd ok(cache_internal::OpenBeneathByWalk(root.get(), "d/../d/b"));
  CHECK(ok.get() >= 0);
  errno = 0;
  CHECK(cache_internal::OpenBeneathByWalk(root.get(), "../etc/passwd") < 0);
  CHECK(errno == EXDEV);
  CHECK(cache_internal::OpenBeneathByWalk(root.get(), "d/../../x") < 0);
  CHECK(errno == EXDEV);
  CHECK(cache_internal::OpenBeneathByWalk(root.get(), "link") < 0);
  CHECK(errno == ELOOP);
  CHECK(cache_internal::OpenBeneathByWalk(root.get(), "a/x") < 0);
}

TEST_CASE("cache server: every descriptor a client sends is closed, and its message refused") {
  SecuredServer s;
  for (const int count : {1, 2, 5}) {  // 5: more than the control buffer holds (MSG_CTRUNC)
    INFO(count << " descriptors");
    int pipe_fds[2];
    REQUIRE(::pipe2(pipe_fds, O_CLOEXEC) == 0);
    OwnedFd read_end(pipe_fds[0]);
    {
      OwnedFd write_end(pipe_fds[1]);
      RawClient c(s.server->socket_path());
      c.SendWithFds(wire::Op::kHello, "fds", std::vector<int>(count, write_end.get()));
      CHECK(c.ClosedByServer());
    }
    // Every copy of the write end the server received is closed: the pipe reaches end of file.
    pollfd p{read_end.get(), POLLIN, 0};
    REQUIRE(::poll(&p, 1, 30000) == 1);
    char byte;
    CHECK(::read(read_end.get(), &byte, 1) == 0);
  }
  CHECK(s.CountLogs("descriptors") == 3);
}

TEST_CASE("cache wire: a reply with two descriptors is refused and both are closed") {
  int sv[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
  OwnedFd server_end(sv[0]), client_end(sv[1]);
  int pipe_fds[2];
  REQUIRE(::pipe2(pipe_fds, O_CLOEXEC) == 0);
  OwnedFd read_end(pipe_fds[0]);
  {
    OwnedFd write_end(pipe_fds[1]);
    wire::WireHeader h;
    h.op = static_cast<uint16_t>(wire::Op::kOpenReply);
    testing::SendRawWithFds(server_end.get(), &h, sizeof(h), {write_end.get(), write_end.get()});
  }
  wire::WireHeader got;
  int received = -1;
  CHECK(wire::RecvHeader(client_end.get(), &got, &received) == EBADMSG);
  CHECK(received == -1);
  char byte;
  CHECK(::read(read_end.get(), &byte, 1) == 0);  // no copy of the write end left open
}

// The resident memory of this process, in bytes.
uint64_t ResidentBytes() {
  std::ifstream in("/proc/self/statm");
  uint64_t pages = 0, resident = 0;
  in >> pages >> resident;
  return resident * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
}

TEST_CASE(
    "cache server: a payload announced and not sent costs nothing, over its op's maximum "
    "it closes the connection") {
  SecuredServer s(CachePolicyKind::kClairvoyant);
  const uint64_t before = ResidentBytes();
  // Three connections announce large payloads and send a few bytes of them only.
  std::vector<std::unique_ptr<RawClient>> stalled;
  for (int i = 0; i < 3; ++i) {
    stalled.push_back(std::make_unique<RawClient>(s.server->socket_path()));
    stalled.back()->SendHeader(wire::Op::kFuture, wire::kMaxFutureBytes);
    stalled.back()->SendBytes("/a\n");
  }
  auto c = s.Connect();  // the server still answers others
  REQUIRE(c->Stats(false).ok());
  CHECK(ResidentBytes() < before + (64u << 20));
  // Above the op's maximum (a path of 512 MiB): closed at once, before reading any of it.
  RawClient big(s.server->socket_path());
  big.SendHeader(wire::Op::kOpen, uint64_t{512} << 20);
  CHECK(big.ClosedByServer());
  CHECK(ResidentBytes() < before + (64u << 20));
  CHECK(s.CountLogs("above its maximum") == 1);
}

TEST_CASE("cache server: read reports cannot wrap the statistics") {
  SecuredServer s;
  const std::string path = s.f.Put("f", 7000);
  RawClient c(s.server->socket_path());
  c.Hello("wrapper");
  const RawClient::Reply r = c.Open(path);
  REQUIRE(r.tier == 0);
  c.Report(path, 0, UINT64_MAX);
  c.Report(path, 0, UINT64_MAX);
  c.Report(s.f.dir / "never-opened", 0, UINT64_MAX);     // no such open: ignored
  c.Report(path, 7, 100);                                // no such tier: ignored
  const auto stats = nlohmann::json::parse(c.Stats());   // after the reports, on their connection
  CHECK(stats["tiers"][0]["bytes_served"] == 2 * 7000);  // each report counts one whole read
  CHECK(stats["source"]["bytes_served"] == 0);
}

TEST_CASE("cache server: a client's name is logged with its control characters escaped") {
  SecuredServer s;
  RawClient c(s.server->socket_path());
  c.Hello("evil\nFAKE: server stopped\x1b[2J\\");
  c.SendHeader(static_cast<wire::Op>(99), 0);  // an unknown op: logged with the name
  CHECK(c.ClosedByServer());
  s.WaitForLog("unknown op");
  const std::string line = s.LogWith("unknown op");
  CHECK(line.find('\n') == std::string::npos);
  CHECK(line.find('\x1b') == std::string::npos);
  CHECK_THAT(line, Catch::Contains("evil\\x0aFAKE: server stopped\\x1b[2J\\x5c"));
}

TEST_CASE("cache server: the socket is 0600 whatever the umask, 0660 of the allowed group") {
  const mode_t old = ::umask(0);
  {
    SecuredServer s;
    struct stat st {};
    REQUIRE(::stat(s.server->socket_path().c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
  }
  {
    SecuredServer s(CachePolicyKind::kLru, false, static_cast<int64_t>(::getegid()));
    struct stat st {};
    REQUIRE(::stat(s.server->socket_path().c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0660);
    CHECK(st.st_gid == ::getegid());
  }
  ::umask(old);
}

// In a child of another uid (and group `gid`): whether the server answered its hello.
bool HelloAs(const std::string& socket, uid_t uid, gid_t gid) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (::setgroups(0, nullptr) != 0 || ::setgid(gid) != 0 || ::setuid(uid) != 0) ::_exit(3);
    auto c = cache_internal::CacheClient::Connect(socket, "other user");
    ::_exit(c.ok() ? 0 : 1);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) != 3);
  return WEXITSTATUS(status) == 0;
}

TEST_CASE("cache server: peers of another uid are refused unless in the allowed group") {
  if (::geteuid() != 0) std::exit(77);  // needs a second user to connect as
  constexpr uid_t kNobody = 65534;
  constexpr gid_t kGroup = 54321;
  {
    SecuredServer s;
    // Even through a socket anyone may open, the server checks who connects.
    REQUIRE(::chmod(s.sock_dir.path().c_str(), 0755) == 0);
    REQUIRE(::chmod(s.server->socket_path().c_str(), 0666) == 0);
    CHECK_FALSE(HelloAs(s.server->socket_path(), kNobody, kNobody));
    CHECK(s.server->clients_refused() == 1);
    CHECK(HelloAs(s.server->socket_path(), 0, 0));  // root
  }
  {
    SecuredServer s(CachePolicyKind::kLru, false, kGroup);
    REQUIRE(::chmod(s.sock_dir.path().c_str(), 0755) == 0);
    CHECK(HelloAs(s.server->socket_path(), kNobody, kGroup));
    CHECK_FALSE(HelloAs(s.server->socket_path(), kNobody, kNobody));
  }
}

TEST_CASE("cache server: past max_connections one client is refused, the others served") {
  SecuredServer s(CachePolicyKind::kLru, false, -1, /*max_connections=*/2);
  auto a = s.Connect();
  auto b = s.Connect();
  RawClient third(s.server->socket_path());
  CHECK(third.ClosedByServer());
  CHECK(s.server->clients_refused() == 1);
  REQUIRE(a->Stats(false).ok());
  b.reset();  // a slot frees as soon as a client leaves
  std::unique_ptr<cache_internal::CacheClient> d;
  for (int i = 0; i < 500 && d == nullptr; ++i) {
    auto c = cache_internal::CacheClient::Connect(s.server->socket_path(), "d");
    if (c.ok()) d = std::move(c).value();
    if (d == nullptr) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  REQUIRE(d != nullptr);
  CHECK(d->Stats(false).ok());
}

// A server in a child process, so a limit set there (descriptors, address space) binds it
// alone; killed by the destructor.
class ChildServer {
 public:
  // `limit` runs in the child once the server listens (it sets an rlimit).
  explicit ChildServer(const std::function<void()>& limit) {
    int ready[2];
    REQUIRE(::pipe(ready) == 0);
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      ::close(ready[0]);
      Serve(limit, ready[1]);
    }
    ::close(ready[1]);
    char byte = 0;
    REQUIRE(::read(ready[0], &byte, 1) == 1);
    ::close(ready[0]);
    REQUIRE(byte == 'y');
  }
  ~ChildServer() {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  const std::string& socket() const { return socket_; }
  bool alive() const { return ::kill(pid_, 0) == 0 && ::waitpid(pid_, nullptr, WNOHANG) == 0; }
  // The CPU time the child used so far, in clock ticks.
  uint64_t cpu_ticks() const {
    std::ifstream in("/proc/" + std::to_string(pid_) + "/stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::istringstream rest(stat.substr(stat.rfind(')') + 2));
    std::string field;
    uint64_t utime = 0, stime = 0;
    for (int i = 3; i <= 15 && rest >> field; ++i) {
      if (i == 14) utime = std::stoull(field);
      if (i == 15) stime = std::stoull(field);
    }
    return utime + stime;
  }
  // A client that said hello, or null when the server refused it.
  std::unique_ptr<cache_internal::CacheClient> TryConnect() {
    auto c = cache_internal::CacheClient::Connect(socket_, "client");
    return c.ok() ? std::move(c).value() : nullptr;
  }

 private:
  [[noreturn]] void Serve(const std::function<void()>& limit, int ready) {
    CacheOptions o;
    o.tiers = {MemoryTier(1 << 20)};
    auto cache = TieredCache::Make(std::move(o), source_.get());
    if (!cache.ok()) ::_exit(2);
    CacheServerOptions so;
    so.socket_path = socket_;
    so.data_dirs = {data_.path()};
    so.log = [](const std::string&) {};
    auto server = CacheServer::Start(cache->get(), so);
    if (!server.ok()) ::_exit(2);
    limit();
    (void)!::write(ready, "y", 1);
    while (true) ::pause();
  }

  TempDir data_, sock_dir_;
  std::unique_ptr<Storage> source_ = NewPosixStorage(StorageOptions());
  const std::string socket_ = sock_dir_ / "cache.sock";
  pid_t pid_ = -1;
};

// Connects until the server refuses a client (at most `most`); the clients it answered.
std::vector<std::unique_ptr<cache_internal::CacheClient>> ConnectUntilRefused(ChildServer* s,
                                                                              int most) {
  std::vector<std::unique_ptr<cache_internal::CacheClient>> clients;
  for (int i = 0; i < most; ++i) {
    auto c = s->TryConnect();
    if (c == nullptr) break;
    clients.push_back(std::move(c));
  }
  return clients;
}

// Waits (up to 30 s) for the server to answer a new client.
bool ServedAgain(ChildServer* s) {
  for (int i = 0; i < 300; ++i) {
    auto c = s->TryConnect();
    if (c != nullptr && c->Stats(false).ok()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

TEST_CASE(
    "cache server: at its descriptor limit it refuses clients without spinning, and serves "
    "again once they leave") {
  ChildServer s([] {
    // Descriptors are numbered from the lowest free: fill the gaps, allow 7 more (UBSan's checks
    // need a pipe of their own once clients leave).
    int highest = 0;
    for (int fd = 0; fd < 65536; ++fd) {
      if (::fcntl(fd, F_GETFD) >= 0) highest = fd;
    }
    for (int fd = ::open("/dev/null", O_RDONLY); fd >= 0 && fd < highest;) {
      fd = ::open("/dev/null", O_RDONLY);
    }
    rlimit rl{};
    ::getrlimit(RLIMIT_NOFILE, &rl);
    rl.rlim_cur = static_cast<rlim_t>(highest + 8);
    if (::setrlimit(RLIMIT_NOFILE, &rl) != 0) ::_exit(2);
  });
  auto clients = ConnectUntilRefused(&s, 20);
  CHECK(!clients.empty());
  CHECK(clients.size() < 20);
  // A client waiting in the listen queue is told at once, not left there for poll to report
  // for ever (the server spun at 100% CPU on EMFILE).
  RawClient waiting(s.socket());
  CHECK(waiting.ClosedByServer());
  const uint64_t before = s.cpu_ticks();
  const auto start = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const double wall_ticks =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() *
      static_cast<double>(::sysconf(_SC_CLK_TCK));
  CHECK(static_cast<double>(s.cpu_ticks() - before) < wall_ticks / 4);
  clients.clear();  // their descriptors free in the server as they leave
  CHECK(ServedAgain(&s));
  CHECK(s.alive());
}

TEST_CASE("cache server: a thread it cannot start refuses that client only") {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  std::exit(77);  // sanitizers reserve more address space than any limit this test can set
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
  std::exit(77);
#endif
#endif
  ChildServer s([] {
    // Address space for about two more thread stacks: the third thread cannot start.
    std::ifstream status("/proc/self/status");
    std::string line;
    uint64_t vm_kib = 0;
    while (std::getline(status, line)) {
      if (line.rfind("VmSize:", 0) == 0) vm_kib = std::stoull(line.substr(7));
    }
    rlimit stack{};
    ::getrlimit(RLIMIT_STACK, &stack);
    const uint64_t stack_bytes =
        stack.rlim_cur == RLIM_INFINITY ? (8u << 20) : static_cast<uint64_t>(stack.rlim_cur);
    rlimit rl{};
    ::getrlimit(RLIMIT_AS, &rl);
    rl.rlim_cur = static_cast<rlim_t>(vm_kib * 1024 + 2 * stack_bytes + (6u << 20));
    if (::setrlimit(RLIMIT_AS, &rl) != 0) ::_exit(2);
  });
  auto clients = ConnectUntilRefused(&s, 20);
  CHECK(clients.size() < 20);
  CHECK(s.alive());  // the server aborted (std::system_error) before
  for (auto& c : clients) CHECK(c->Stats(false).ok());
  clients.clear();
  CHECK(ServedAgain(&s));
  CHECK(s.alive());
}

}  // namespace
}  // namespace dlio
