// CacheServer (dlio/cache_server.h): the listening socket, a thread per connection, the ops of
// cache/cache_wire.h.
#include "dlio/cache_server.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <list>
#include <map>
#include <mutex>
#include <thread>

#include "cache/cache_wire.h"
#include "core/owner_stamp.h"

namespace dlio {
namespace {
namespace wire = cache_wire;

Result<sockaddr_un> SocketAddress(const std::string& path) {
  sockaddr_un addr{};
  if (path.empty() || path.size() >= sizeof(addr.sun_path)) {
    return Status::InvalidArgument("cache server socket '", path, "': must be 1 to ",
                                   sizeof(addr.sun_path) - 1, " bytes long");
  }
  addr.sun_family = AF_UNIX;
  path.copy(addr.sun_path, path.size());
  return addr;
}

// Whether a process accepts connections on the socket `path`.
bool SocketAlive(const sockaddr_un& addr) {
  OwnedFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return true;  // cannot tell: assume alive, replace nothing
  const int rc = ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr));
  return rc == 0 || errno != ECONNREFUSED;
}

// May a new socket be renamed onto `path`? Nothing there, or a socket nobody listens on.
Status CheckReplaceable(const std::string& path, const sockaddr_un& addr) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    return errno == ENOENT ? Status::OK() : Status::FromErrno(errno, "cache server socket " + path);
  }
  if (!S_ISSOCK(st.st_mode)) {
    return Status::FailedPrecondition("cache server socket ", path,
                                      " exists and is not a socket; not replacing it");
  }
  if (SocketAlive(addr)) {
    return Status::FailedPrecondition("cache server socket ", path,
                                      ": another server is listening on it");
  }
  return Status::OK();
}

int ErrnoOf(const Status& status) {
  switch (status.code()) {
    case StatusCode::kNotFound:
      return ENOENT;
    case StatusCode::kInvalidArgument:
      return EINVAL;
    case StatusCode::kResourceExhausted:
      return ENOSPC;
    default:
      return EIO;
  }
}

std::vector<std::string> SplitLines(const std::string& payload) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < payload.size()) {
    size_t end = payload.find('\n', start);
    if (end == std::string::npos) end = payload.size();
    if (end > start) out.push_back(payload.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

class CacheServerImpl final : public CacheServer {
 public:
  CacheServerImpl(TieredCache* cache, CacheServerOptions options)
      : cache_(cache), options_(std::move(options)) {
    hello_.policy = static_cast<uint32_t>(cache_->policy());
    hello_.tiers = static_cast<uint32_t>(cache_->Stats().tiers.size());
    hello_.source_latency_ns = options_.source_cost.latency_ns;
    hello_.source_bytes_per_s = options_.source_cost.bytes_per_s;
    if (!options_.default_future.empty()) {
      futures_[kDefaultFuture].paths = options_.default_future;
      SetFuture();
    }
  }

  ~CacheServerImpl() override {
    stopping_ = true;
    char byte = 0;
    (void)!::write(wake_[1], &byte, 1);
    if (acceptor_.joinable()) acceptor_.join();
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (Connection& c : connections_) ::shutdown(c.fd.get(), SHUT_RDWR);
    }
    for (Connection& c : connections_) c.thread.join();
    RemoveOwnSocket();
    ::close(wake_[0]);
    ::close(wake_[1]);
  }

  Status Listen() {
    DLIO_ASSIGN_OR_RETURN(sockaddr_un addr, SocketAddress(options_.socket_path));
    DLIO_RETURN_NOT_OK(CheckReplaceable(options_.socket_path, addr));
    const std::string tmp = StrCat(options_.socket_path, ".tmp", ::getpid());
    DLIO_ASSIGN_OR_RETURN(sockaddr_un tmp_addr, SocketAddress(tmp));
    listener_.reset(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (listener_.get() < 0) return Status::FromErrno(errno, "socket for " + options_.socket_path);
    if (::bind(listener_.get(), reinterpret_cast<const sockaddr*>(&tmp_addr), sizeof(tmp_addr)) !=
        0) {
      return Status::FromErrno(errno, "binding the cache server socket " + tmp);
    }
    Status status = ::listen(listener_.get(), SOMAXCONN) == 0
                        ? CheckReplaceable(options_.socket_path, addr)
                        : Status::FromErrno(errno, "listening on " + tmp);
    if (status.ok() && ::rename(tmp.c_str(), options_.socket_path.c_str()) != 0) {
      status = Status::FromErrno(errno, StrCat("renaming ", tmp, " to ", options_.socket_path));
    }
    if (!status.ok()) {
      ::unlink(tmp.c_str());  // the socket this call bound
      return status;
    }
    struct stat st {};
    if (::lstat(options_.socket_path.c_str(), &st) == 0) socket_inode_ = {st.st_dev, st.st_ino};
    if (::pipe2(wake_, O_CLOEXEC) != 0) return Status::FromErrno(errno, "pipe");
    acceptor_ = std::thread([this] { AcceptLoop(); });
    return Status::OK();
  }

  const std::string& socket_path() const override { return options_.socket_path; }
  uint64_t clients_seen() const override { return next_client_.load(); }

 private:
  static constexpr uint32_t kDefaultFuture = UINT32_MAX;  // the --future list's slot in futures_

  struct FutureList {
    std::vector<std::string> paths;
    size_t next = 0;  // the first of `paths` not opened yet
  };

  struct Connection {
    OwnedFd fd;
    std::thread thread;
    std::atomic<bool> done{false};
  };

  void Log(const std::string& line) const {
    if (options_.log) {
      options_.log(line);
    } else {
      std::fprintf(stderr, "dlio cache server %s: %s\n", options_.socket_path.c_str(),
                   line.c_str());
    }
  }

  void AcceptLoop() {
    while (!stopping_) {
      pollfd fds[2] = {{listener_.get(), POLLIN, 0}, {wake_[0], POLLIN, 0}};
      if (::poll(fds, 2, -1) < 0 && errno != EINTR) break;
      if (stopping_) break;
      if ((fds[0].revents & POLLIN) == 0) continue;
      const int fd = ::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      std::lock_guard<std::mutex> lock(mu_);
      Reap();
      Connection& c = connections_.emplace_back();
      c.fd.reset(fd);
      const uint32_t index = next_client_.fetch_add(1);
      c.thread = std::thread([this, &c, index] {
        Serve(c.fd.get(), index);
        c.done = true;
      });
    }
  }

  // Joins the threads of closed connections. Requires mu_.
  void Reap() {
    for (auto it = connections_.begin(); it != connections_.end();) {
      if (!it->done) {
        ++it;
        continue;
      }
      it->thread.join();
      it = connections_.erase(it);
    }
  }

  // Answers the requests of one client until it closes or sends something malformed.
  void Serve(int fd, uint32_t index) {
    std::string name = StrCat("client ", index);
    while (true) {
      wire::WireHeader h;
      int err = wire::RecvHeader(fd, &h);
      std::string payload;
      if (err == 0) {
        payload.resize(h.payload_bytes);
        err = wire::RecvAll(fd, payload.data(), payload.size());
      }
      if (err == ECONNRESET || (err != 0 && stopping_)) break;
      if (err != 0) {
        Log(StrCat(name, ": closing the connection: ",
                   err == EPROTO ? "malformed message header" : std::strerror(err)));
        break;
      }
      std::string problem = Handle(fd, index, static_cast<wire::Op>(h.op), payload, &name);
      if (!problem.empty()) {
        Log(StrCat(name, ": closing the connection: ", problem));
        break;
      }
    }
    ::shutdown(fd, SHUT_RDWR);
    DropFuture(index);
  }

  // One request; returns why the connection must close ("" to go on).
  std::string Handle(int fd, uint32_t index, wire::Op op, const std::string& payload,
                     std::string* name) {
    switch (op) {
      case wire::Op::kHello: {
        if (!payload.empty()) *name = StrCat(payload.substr(0, 200), " (client ", index, ")");
        wire::HelloReply reply = hello_;
        reply.client_index = index;
        return Reply(wire::SendMessage(fd, wire::Op::kHelloReply, &reply, sizeof(reply)));
      }
      case wire::Op::kOpen:
        if (!ValidPath(payload)) return "kOpen of a path that is not absolute";
        AdvanceFuture(index, payload);
        return Reply(SendOpen(fd, payload));
      case wire::Op::kFuture:
        SetClientFuture(index, SplitLines(payload));
        return Reply(SendAck(fd, Status::OK(), ""));
      case wire::Op::kReadReport: {
        wire::ReadReport report;
        if (payload.size() < sizeof(report)) return "kReadReport shorter than its ReadReport";
        std::memcpy(&report, payload.data(), sizeof(report));
        cache_->CreditRead(report.tier, report.bytes);
        return "";
      }
      case wire::Op::kInvalidate:
        if (!ValidPath(payload)) return "kInvalidate of a path that is not absolute";
        cache_->Invalidate(payload);
        return Reply(SendAck(fd, Status::OK(), ""));
      case wire::Op::kStats:
      case wire::Op::kTakeStats: {
        const CacheStats stats = op == wire::Op::kStats ? cache_->Stats() : cache_->TakeStats();
        return Reply(SendAck(fd, Status::OK(), CacheStatsJson(stats)));
      }
      default:
        return StrCat("unknown op ", static_cast<unsigned>(op));
    }
  }

  static bool ValidPath(const std::string& path) {
    return !path.empty() && path[0] == '/' && path.find('\0') == std::string::npos;
  }

  static std::string Reply(int err) {
    return err == 0 ? "" : StrCat("sending the reply: ", std::strerror(err));
  }

  int SendOpen(int fd, const std::string& path) {
    wire::OpenReply reply;
    auto handoff = cache_->OpenForHandoff(path);
    if (!handoff.ok()) {
      reply.error = ErrnoOf(handoff.status());
      const std::string message = handoff.status().message();
      return wire::SendMessage(fd, wire::Op::kOpenReply, &reply, sizeof(reply), message.data(),
                               message.size());
    }
    reply.tier = handoff->tier;
    reply.size = handoff->size;
    reply.mtime_ns = handoff->mtime_ns;
    reply.flags = handoff->read_through ? wire::kOpenReadThrough : 0;
    const int pass = reply.tier >= 0 ? handoff->fd.get() : -1;
    return wire::SendMessage(fd, wire::Op::kOpenReply, &reply, sizeof(reply), nullptr, 0, pass);
  }

  static int SendAck(int fd, const Status& status, const std::string& payload) {
    wire::Ack ack;
    ack.error = status.ok() ? 0 : ErrnoOf(status);
    const std::string& body = status.ok() ? payload : status.message();
    return wire::SendMessage(fd, wire::Op::kAck, &ack, sizeof(ack), body.data(), body.size());
  }

  void SetClientFuture(uint32_t index, std::vector<std::string> paths) {
    if (!cache_->uses_future_accesses()) return;
    std::lock_guard<std::mutex> lock(future_mu_);
    futures_[index] = FutureList{std::move(paths), 0};
    SetFuture();
  }

  // Moves a list past `path` when it is its next open, so a later merge starts where each client
  // is: the client's own list; for a connection without one (a process opening on several
  // connections, its list sent on the first), the first list whose next open `path` is, the
  // --future list last.
  void AdvanceFuture(uint32_t index, const std::string& path) {
    if (!cache_->uses_future_accesses()) return;
    std::lock_guard<std::mutex> lock(future_mu_);
    auto next_is = [&](FutureList& list) {
      return list.next < list.paths.size() && list.paths[list.next] == path;
    };
    auto own = futures_.find(index);
    if (own != futures_.end()) {
      if (next_is(own->second)) ++own->second.next;
      return;
    }
    for (auto& [i, list] : futures_) {  // the --future list's index is the largest: last
      if (next_is(list)) {
        ++list.next;
        return;
      }
    }
  }

  void DropFuture(uint32_t index) {
    std::lock_guard<std::mutex> lock(future_mu_);
    if (futures_.erase(index) != 0) SetFuture();
  }

  // Merges the lists of futures_ (by client index, the --future list last) into the cache.
  // Requires future_mu_ (or the constructor).
  void SetFuture() {
    std::vector<FutureListView> lists;
    for (const auto& [index, list] : futures_) lists.push_back({&list.paths, list.next});
    cache_->SetFutureAccesses(MergeFutureLists(lists));
  }

  void RemoveOwnSocket() {
    struct stat st {};
    if (::lstat(options_.socket_path.c_str(), &st) == 0 &&
        std::make_pair(st.st_dev, st.st_ino) == socket_inode_) {
      ::unlink(options_.socket_path.c_str());  // the socket this server made, not a successor's
    }
  }

  TieredCache* const cache_;
  const CacheServerOptions options_;
  wire::HelloReply hello_;
  OwnedFd listener_;
  std::pair<dev_t, ino_t> socket_inode_{0, 0};
  int wake_[2] = {-1, -1};
  std::atomic<bool> stopping_{false};
  std::atomic<uint32_t> next_client_{0};
  std::thread acceptor_;
  std::mutex mu_;  // guards connections_
  std::list<Connection> connections_;
  std::mutex future_mu_;  // guards futures_
  std::map<uint32_t, FutureList> futures_;
};

}  // namespace

Result<std::unique_ptr<CacheServer>> CacheServer::Start(TieredCache* cache,
                                                        CacheServerOptions options) {
  if (cache == nullptr) return Status::InvalidArgument("cache server: the cache is null");
  auto server = std::make_unique<CacheServerImpl>(cache, std::move(options));
  DLIO_RETURN_NOT_OK(server->Listen());
  return std::unique_ptr<CacheServer>(std::move(server));
}

std::vector<std::string> MergeFutureLists(const std::vector<FutureListView>& lists) {
  std::vector<std::string> merged;
  size_t longest = 0, total = 0;
  for (const FutureListView& list : lists) {
    const size_t left = list.paths->size() - std::min(list.from, list.paths->size());
    longest = std::max(longest, left);
    total += left;
  }
  merged.reserve(total);
  for (size_t i = 0; i < longest; ++i) {
    for (const FutureListView& list : lists) {
      if (list.from + i < list.paths->size()) merged.push_back((*list.paths)[list.from + i]);
    }
  }
  return merged;
}

}  // namespace dlio
