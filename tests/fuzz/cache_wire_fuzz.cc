// The cache_wire target: part 0 is what one client sends a cache server on its connection (the
// wire protocol of libdlio/src/cache/cache_wire.h), fed through a socketpair into the server's
// real per-connection loop (cache_internal::CacheService::Serve, as a CacheServer runs it per
// connection) over a memory-tier cache of a small data directory, kCacheWireDataDir. Properties:
// Serve returns (the client's end of file or a refusal), leaks no descriptor, and hands out no
// file outside the data directory (every descriptor a reply carries reads a file beneath it).
#include <dirent.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cache/beneath.h"
#include "cache/cache_session.h"
#include "cache/cache_wire.h"
#include "dlio/cache.h"
#include "fuzz_targets.h"

namespace dlio::fuzz {
namespace {

namespace wire = cache_wire;

[[noreturn]] void Violated(const std::string& what) {
  std::fprintf(stderr, "dlio fuzz cache_wire: contract violated: %s\n", what.c_str());
  std::abort();
}

// Writes `name` in the data directory unless it is there (atomically: replays may run at once).
void Ensure(const std::string& name, const std::string& bytes) {
  const std::string path = std::string(kCacheWireDataDir) + "/" + name;
  if (::access(path.c_str(), F_OK) == 0) return;
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) {
    Violated("cannot write " + tmp);
  }
  std::fclose(f);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) Violated("cannot rename " + tmp);
}

// The data directory (this user's, 0700), its files and a link leading out of it.
void MakeDataDir() {
  if (::mkdir(kCacheWireDataDir, 0700) != 0 && errno != EEXIST) Violated("mkdir data dir");
  struct stat st {};
  if (::lstat(kCacheWireDataDir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid()) {
    Violated(std::string(kCacheWireDataDir) + " is not a folder of this user");
  }
  Ensure("a", std::string(3000, 'a'));
  Ensure("b", std::string(70000, 'b'));
  Ensure("empty", "");
  const std::string link = std::string(kCacheWireDataDir) + "/out";
  if (::symlink("/etc/passwd", link.c_str()) != 0 && errno != EEXIST) Violated("symlink");
}

struct Fixture {
  std::unique_ptr<Storage> source = NewPosixStorage(StorageOptions());
  std::unique_ptr<TieredCache> lru, clairvoyant;
  std::unique_ptr<cache_internal::CacheService> lru_service, clairvoyant_service;

  Fixture() {
    MakeDataDir();
    lru = MakeCache(CachePolicyKind::kLru);
    clairvoyant = MakeCache(CachePolicyKind::kClairvoyant);
    lru_service = MakeService(lru.get());
    clairvoyant_service = MakeService(clairvoyant.get());
  }
  std::unique_ptr<TieredCache> MakeCache(CachePolicyKind policy) {
    CacheOptions o;
    CacheTierOptions tier;
    tier.capacity_bytes = 64 << 10;  // b does not fit: skipped_too_big paths too
    o.tiers = {tier};
    o.policy = policy;
    auto cache = TieredCache::Make(std::move(o), source.get());
    if (!cache.ok()) Violated(cache.status().ToString());
    return std::move(cache).value();
  }
  std::unique_ptr<cache_internal::CacheService> MakeService(TieredCache* cache) {
    CacheServerOptions o;
    o.socket_path = "(fuzz)";
    o.log = [](const std::string&) {};
    auto dirs = cache_internal::AllowedDirs::Make({kCacheWireDataDir}, "fuzz");
    if (!dirs.ok()) Violated(dirs.status().ToString());
    return std::make_unique<cache_internal::CacheService>(cache, o, std::move(dirs).value());
  }
};

// Whether the descriptor a reply carried reads a file beneath the data directory (a copy of one
// of its files: the same bytes as one of them).
void CheckHandedOut(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) Violated("a descriptor of a non-file");
  if ((::fcntl(fd, F_GETFL) & O_ACCMODE) != O_RDONLY) Violated("a writable descriptor");
  char first = 0;
  const ssize_t r = ::pread(fd, &first, 1, 0);
  if (r == 1 && first != 'a' && first != 'b') Violated("a descriptor of a file outside");
}

// Reads the server's replies until it closes, checking every descriptor that comes with them.
void DrainReplies(int fd) {
  char buf[4096];
  while (true) {
    iovec iov{buf, sizeof(buf)};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 4)] = {};
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    const ssize_t r = ::recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
    int kept = -1;
    const int fds = wire::TakeDescriptors(&msg, &kept);
    if (kept >= 0) {
      CheckHandedOut(kept);
      ::close(kept);
    }
    if (fds > 1) Violated("a reply with several descriptors");
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return;
  }
}

// The descriptors this process holds, not counting the memory tier's copies (memfds, which the
// cache keeps while they are resident).
int OpenDescriptors() {
  DIR* dir = ::opendir("/proc/self/fd");  // C's: no std::filesystem in a sanitized harness
  if (dir == nullptr) Violated("cannot list /proc/self/fd");
  int count = 0;
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    char link[320], target[PATH_MAX];
    std::snprintf(link, sizeof(link), "/proc/self/fd/%s", entry->d_name);
    const ssize_t n = ::readlink(link, target, sizeof(target) - 1);
    if (n < 0) continue;
    target[n] = '\0';
    if (std::strncmp(target, "/memfd:", 7) != 0) ++count;
  }
  ::closedir(dir);
  return count;
}

}  // namespace

int FuzzCacheWire(uint8_t options, const std::vector<std::string_view>& parts) {
  static Fixture* fixture = new Fixture();  // for the process: its threads live as long
  static std::atomic<uint32_t> next_index{0};
  const bool clairvoyant = (options & 1) != 0;
  cache_internal::CacheService* service =
      clairvoyant ? fixture->clairvoyant_service.get() : fixture->lru_service.get();
  TieredCache* cache = clairvoyant ? fixture->clairvoyant.get() : fixture->lru.get();
  const std::string_view input = parts[0];
  cache->WaitIdle();
  const int before = OpenDescriptors();
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) Violated("socketpair");
  std::thread writer([&] {
    (void)wire::SendAll(sv[1], input.data(), input.size());
    ::shutdown(sv[1], SHUT_WR);
  });
  std::thread reader([&] { DrainReplies(sv[1]); });
  const std::atomic<bool> stopping{false};
  service->Serve(sv[0], next_index++, stopping);  // returns: the input ends or is refused
  writer.join();
  reader.join();
  ::close(sv[0]);
  ::close(sv[1]);
  cache->WaitIdle();  // prefetches done: their source files closed
  if (OpenDescriptors() != before) Violated("a descriptor leaked");
  return 0;
}

namespace {

// One message: a header and its payload.
std::string Message(wire::Op op, std::string_view payload) {
  wire::WireHeader h;
  h.op = static_cast<uint16_t>(op);
  h.payload_bytes = payload.size();
  return std::string(reinterpret_cast<const char*>(&h), sizeof(h)) + std::string(payload);
}

std::string Report(const std::string& path, int32_t tier, uint64_t bytes) {
  wire::ReadReport r;
  r.tier = tier;
  r.bytes = bytes;
  return Message(wire::Op::kReadReport,
                 std::string(reinterpret_cast<const char*>(&r), sizeof(r)) + path);
}

}  // namespace

std::vector<std::pair<std::string, std::string>> CacheWireSeeds() {
  const std::string dir = kCacheWireDataDir;
  const std::string a = dir + "/a", b = dir + "/b";
  const std::string hello = Message(wire::Op::kHello, "pid 1");
  const std::string lru = std::string(1, '\0'), clairvoyant = std::string(1, '\1');
  wire::WireHeader huge;
  huge.op = static_cast<uint16_t>(wire::Op::kFuture);
  huge.payload_bytes = wire::kMaxFutureBytes;
  return {
      {"open_read_report_stats", lru + hello + Message(wire::Op::kOpen, a) + Report(a, 0, 3000) +
                                     Message(wire::Op::kOpen, a) + Report(a, 0, UINT64_MAX) +
                                     Message(wire::Op::kStats, "") +
                                     Message(wire::Op::kTakeStats, "")},
      {"future_then_opens",
       clairvoyant + hello +
           Message(wire::Op::kFuture,
                   a + "\n" + b + "\n" + dir + "/out\n/etc/passwd\n" + a + "\n") +
           Message(wire::Op::kOpen, a) + Message(wire::Op::kOpen, b) + Report(b, -1, 70000) +
           Message(wire::Op::kOpen, a) + Message(wire::Op::kStats, "")},
      {"refused_paths",
       lru + hello + Message(wire::Op::kOpen, dir + "/../../etc/passwd") +
           Message(wire::Op::kOpen, dir + "/out") + Message(wire::Op::kOpen, "/etc/passwd") +
           Message(wire::Op::kOpen, dir + "/missing") + Message(wire::Op::kOpen, dir) +
           Message(wire::Op::kOpen, dir + "/./a/../empty")},
      {"invalidate", lru + Message(wire::Op::kOpen, a) + Message(wire::Op::kInvalidate, a) +
                         Message(wire::Op::kInvalidate, "/etc/passwd") +
                         Message(wire::Op::kOpen, a)},
      {"hello_control_chars", lru + Message(wire::Op::kHello, "x\n\x1b[2J\\y")},
      {"future_over_maximum",
       lru + std::string(reinterpret_cast<const char*>(&huge), sizeof(huge)) + a},
      {"unknown_op", lru + hello + Message(static_cast<wire::Op>(77), "?")},
  };
}

}  // namespace dlio::fuzz
