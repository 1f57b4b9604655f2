// A cache server with one data directory and a raw client of its wire protocol that sends what
// a hostile client would (descriptors, announced payloads, reports), for the security tests.
#pragma once

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cache/cache_client.h"
#include "cache/cache_wire.h"
#include "cache_test_util.h"
#include "dlio/cache_server.h"

namespace dlio::testing {

// Sends `n` bytes with `fds` attached as one SCM_RIGHTS message (what no dlio peer sends).
inline void SendRawWithFds(int sock, const void* data, size_t n, const std::vector<int>& fds) {
  iovec iov{const_cast<void*>(data), n};
  std::vector<char> control(CMSG_SPACE(sizeof(int) * fds.size()));
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control.data();
  msg.msg_controllen = control.size();
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
  std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  REQUIRE(::sendmsg(sock, &msg, MSG_NOSIGNAL) == static_cast<ssize_t>(n));
}

// A TieredCache (one memory tier; over a source confined to the data directory when `confined`)
// served with the data directory f.dir; log lines kept.
struct SecuredServer {
  CacheFixture f;
  TempDir sock_dir;
  CacheFixture::Cached tiered;  // when not confined
  ServedCache served;           // when confined
  TieredCache* cached = nullptr;
  std::unique_ptr<CacheServer> server;
  std::mutex log_mu;
  std::vector<std::string> logs;

  explicit SecuredServer(CachePolicyKind policy = CachePolicyKind::kLru, bool confined = false,
                         int64_t allow_gid = -1, size_t max_connections = 256) {
    if (confined) {
      auto source = NewConfinedCacheSource(NewPosixStorage(StorageOptions()), {f.dir.path()},
                                           "test data dir");
      REQUIRE(source.ok());
      served.source = std::move(source).value();
      CacheOptions o;
      o.tiers = {MemoryTier(64 << 20)};
      o.policy = policy;
      auto cache = TieredCache::Make(std::move(o), served.source.get());
      REQUIRE(cache.ok());
      served.cache = std::move(cache).value();
      cached = served.cache.get();
    } else {
      tiered = f.Make({MemoryTier(64 << 20)}, policy);
      cached = tiered.cache;
    }
    CacheServerOptions o;
    o.socket_path = sock_dir / "cache.sock";
    o.data_dirs = {f.dir.path()};
    o.allow_gid = allow_gid;
    o.max_connections = max_connections;
    o.log = [this](const std::string& line) {
      std::lock_guard<std::mutex> lock(log_mu);
      logs.push_back(line);
    };
    auto s = CacheServer::Start(cached, std::move(o));
    REQUIRE(s.ok());
    server = std::move(s).value();
  }
  ~SecuredServer() { server.reset(); }

  std::unique_ptr<cache_internal::CacheClient> Connect(const std::string& name = "test") {
    auto c = cache_internal::CacheClient::Connect(server->socket_path(), name);
    REQUIRE(c.ok());
    return std::move(c).value();
  }
  int CountLogs(const std::string& part) {
    std::lock_guard<std::mutex> lock(log_mu);
    int n = 0;
    for (const std::string& line : logs) n += line.find(part) != std::string::npos;
    return n;
  }
  std::string LogWith(const std::string& part) {
    std::lock_guard<std::mutex> lock(log_mu);
    for (const std::string& line : logs) {
      if (line.find(part) != std::string::npos) return line;
    }
    return "";
  }
  // Waits (up to 30 s: the server logs as the connection's thread ends) for a line with `part`.
  void WaitForLog(const std::string& part) {
    for (int i = 0; i < 3000 && CountLogs(part) == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    REQUIRE(CountLogs(part) > 0);
  }
};

// A client that writes the wire protocol by hand.
class RawClient {
 public:
  explicit RawClient(const std::string& socket) : fd_(::socket(AF_UNIX, SOCK_STREAM, 0)) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    socket.copy(addr.sun_path, sizeof(addr.sun_path) - 1);
    REQUIRE(::connect(fd_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  }
  struct Reply {
    int error = 0;
    int tier = -1;
    uint64_t size = 0;
    OwnedFd fd;
    std::string message;
  };

  void SendHeader(cache_wire::Op op, uint64_t payload_bytes) {
    cache_wire::WireHeader h;
    h.op = static_cast<uint16_t>(op);
    h.payload_bytes = payload_bytes;
    REQUIRE(cache_wire::SendAll(fd_.get(), &h, sizeof(h)) == 0);
  }
  void SendBytes(const std::string& bytes) {
    REQUIRE(cache_wire::SendAll(fd_.get(), bytes.data(), bytes.size()) == 0);
  }
  void SendWithFds(cache_wire::Op op, const std::string& payload, const std::vector<int>& fds) {
    cache_wire::WireHeader h;
    h.op = static_cast<uint16_t>(op);
    h.payload_bytes = payload.size();
    SendRawWithFds(fd_.get(), &h, sizeof(h), fds);
    (void)cache_wire::SendAll(fd_.get(), payload.data(), payload.size());
  }
  void Hello(const std::string& name) {
    REQUIRE(cache_wire::SendMessage(fd_.get(), cache_wire::Op::kHello, name.data(), name.size()) ==
            0);
    cache_wire::WireHeader h;
    REQUIRE(cache_wire::RecvHeader(fd_.get(), &h) == 0);
    REQUIRE(h.payload_bytes == sizeof(cache_wire::HelloReply));
    cache_wire::HelloReply reply;
    REQUIRE(cache_wire::RecvAll(fd_.get(), &reply, sizeof(reply)) == 0);
  }
  Reply Open(const std::string& path) {
    REQUIRE(cache_wire::SendMessage(fd_.get(), cache_wire::Op::kOpen, path.data(), path.size()) ==
            0);
    cache_wire::WireHeader h;
    int received = -1;
    REQUIRE(cache_wire::RecvHeader(fd_.get(), &h, &received) == 0);
    Reply out;
    out.fd.reset(received);
    REQUIRE(h.op == static_cast<uint16_t>(cache_wire::Op::kOpenReply));
    cache_wire::OpenReply reply;
    REQUIRE(cache_wire::RecvAll(fd_.get(), &reply, sizeof(reply)) == 0);
    out.message.resize(h.payload_bytes - sizeof(reply));
    REQUIRE(cache_wire::RecvAll(fd_.get(), out.message.data(), out.message.size()) == 0);
    out.error = reply.error;
    out.tier = reply.tier;
    out.size = reply.size;
    return out;
  }
  void Report(const std::string& path, int tier, uint64_t bytes) {
    cache_wire::ReadReport r;
    r.tier = tier;
    r.bytes = bytes;
    REQUIRE(cache_wire::SendMessage(fd_.get(), cache_wire::Op::kReadReport, &r, sizeof(r),
                                    path.data(), path.size()) == 0);
  }
  // kStats: the server's statistics (JSON), answered after every earlier request of this client.
  std::string Stats() {
    REQUIRE(cache_wire::SendMessage(fd_.get(), cache_wire::Op::kStats, nullptr, 0) == 0);
    cache_wire::WireHeader h;
    REQUIRE(cache_wire::RecvHeader(fd_.get(), &h) == 0);
    REQUIRE(h.payload_bytes >= sizeof(cache_wire::Ack));
    std::string payload(h.payload_bytes, '\0');
    REQUIRE(cache_wire::RecvAll(fd_.get(), payload.data(), payload.size()) == 0);
    return payload.substr(sizeof(cache_wire::Ack));
  }
  // Whether the server closes the connection (within 30 s), reading and dropping what comes.
  bool ClosedByServer() {
    for (int i = 0; i < 300; ++i) {
      pollfd p{fd_.get(), POLLIN, 0};
      if (::poll(&p, 1, 100) != 1) continue;
      char buf[256];
      const ssize_t r = ::recv(fd_.get(), buf, sizeof(buf), 0);
      if (r == 0 || (r < 0 && errno == ECONNRESET)) return true;
    }
    return false;
  }
  void Close() { fd_.reset(); }

 private:
  OwnedFd fd_;
};

}  // namespace dlio::testing
