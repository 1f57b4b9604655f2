// CacheServer (dlio/cache_server.h): the listening socket, who may connect, a thread per
// connection; the requests are cache/cache_session.cc's.
#include "dlio/cache_server.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <list>
#include <mutex>
#include <vector>

#include "cache/cache_session.h"

namespace dlio {
namespace {

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

// Whether the peer of `fd` may use the server (SO_PEERCRED): the server's own uid, root, or a
// member of `allow_gid` (>= 0) by its effective or a supplementary group (SO_PEERGROUPS).
bool PeerAllowed(int fd, int64_t allow_gid, std::string* who) {
  ucred cred{};
  socklen_t len = sizeof(cred);
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    *who = "a peer whose credentials cannot be read";
    return false;
  }
  *who = StrCat("pid ", cred.pid, " (uid ", cred.uid, ", gid ", cred.gid, ")");
  if (cred.uid == ::geteuid() || cred.uid == 0) return true;
  if (allow_gid < 0) return false;
  if (static_cast<int64_t>(cred.gid) == allow_gid) return true;
  std::vector<gid_t> groups(64);
  socklen_t glen = static_cast<socklen_t>(groups.size() * sizeof(gid_t));
  int rc = ::getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups.data(), &glen);
  if (rc != 0 && errno == ERANGE) {  // glen now says how much room they need
    groups.resize(glen / sizeof(gid_t) + 1);
    glen = static_cast<socklen_t>(groups.size() * sizeof(gid_t));
    rc = ::getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups.data(), &glen);
  }
  if (rc != 0) return false;
  groups.resize(glen / sizeof(gid_t));
  return std::find(groups.begin(), groups.end(), static_cast<gid_t>(allow_gid)) != groups.end();
}

class CacheServerImpl final : public CacheServer {
 public:
  CacheServerImpl(TieredCache* cache, CacheServerOptions options, cache_internal::AllowedDirs dirs)
      : options_(std::move(options)), service_(cache, options_, std::move(dirs)) {}

  ~CacheServerImpl() override {
    stopping_ = true;
    Wake();
    if (acceptor_started_) ::pthread_join(acceptor_, nullptr);
    std::list<Connection> connections;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (Connection& c : connections_) {
        if (c.fd.get() >= 0) ::shutdown(c.fd.get(), SHUT_RDWR);
      }
      connections.swap(connections_);
    }
    for (Connection& c : connections) ::pthread_join(c.thread, nullptr);
    RemoveOwnSocket();
    for (int fd : wake_) {
      if (fd >= 0) ::close(fd);
    }
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
    // Its mode before it listens (a connect fails until then), whatever the umask.
    Status status = SetSocketMode(tmp);
    if (status.ok() && ::listen(listener_.get(), SOMAXCONN) != 0) {
      status = Status::FromErrno(errno, "listening on " + tmp);
    }
    if (status.ok()) status = CheckReplaceable(options_.socket_path, addr);
    if (status.ok() && ::rename(tmp.c_str(), options_.socket_path.c_str()) != 0) {
      status = Status::FromErrno(errno, StrCat("renaming ", tmp, " to ", options_.socket_path));
    }
    if (!status.ok()) {
      ::unlink(tmp.c_str());  // the socket this call bound
      return status;
    }
    struct stat st {};
    if (::lstat(options_.socket_path.c_str(), &st) == 0) socket_inode_ = {st.st_dev, st.st_ino};
    if (::pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) return Status::FromErrno(errno, "pipe");
    reserve_.reset(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    const int err = ::pthread_create(&acceptor_, nullptr, &CacheServerImpl::AcceptMain, this);
    if (err != 0) return Status::FromErrno(err, "starting the cache server's accepting thread");
    acceptor_started_ = true;
    return Status::OK();
  }

  const std::string& socket_path() const override { return options_.socket_path; }
  uint64_t clients_seen() const override { return next_client_.load(); }
  uint64_t clients_refused() const override { return refused_.load(); }

 private:
  struct Connection {
    OwnedFd fd;  // closed by its thread when the client is done (under mu_)
    pthread_t thread{};
    uint32_t index = 0;
    bool done = false;  // guarded by mu_
    CacheServerImpl* server = nullptr;
  };

  Status SetSocketMode(const std::string& path) {
    const mode_t mode = options_.allow_gid >= 0 ? 0660 : 0600;
    if (options_.allow_gid >= 0 && ::chown(path.c_str(), static_cast<uid_t>(-1),
                                           static_cast<gid_t>(options_.allow_gid)) != 0) {
      return Status::FromErrno(
          errno, StrCat("giving the cache server socket ", path, " to group ", options_.allow_gid));
    }
    if (::chmod(path.c_str(), mode) != 0) {
      return Status::FromErrno(errno, "chmod of the cache server socket " + path);
    }
    return Status::OK();
  }

  void Wake() {
    const char byte = 0;
    (void)!::write(wake_[1], &byte, 1);
  }

  static void* AcceptMain(void* self) {
    static_cast<CacheServerImpl*>(self)->AcceptLoop();
    return nullptr;
  }

  // A refusal of one client; logged at most once a second (a flood of refusals is one line).
  void Refuse(const std::string& why) {
    refused_.fetch_add(1);
    const auto now = std::chrono::steady_clock::now();
    if (now - last_refusal_log_ < std::chrono::seconds(1)) return;
    last_refusal_log_ = now;
    service_.Log(StrCat("refused a client: ", why, " (", refused_.load(), " refused so far)"));
  }

  void AcceptLoop() {
    bool backoff = false;  // out of descriptors with no reserve: wait instead of spinning
    while (!stopping_) {
      Reap();
      pollfd fds[2] = {{wake_[0], POLLIN, 0}, {listener_.get(), POLLIN, 0}};
      if (::poll(fds, backoff ? 1 : 2, backoff ? 100 : -1) < 0 && errno != EINTR) break;
      char drain[64];
      while (::read(wake_[0], drain, sizeof(drain)) > 0) {
      }
      backoff = false;
      if (stopping_ || (fds[1].revents & POLLIN) == 0) continue;
      const int fd = ::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) {
        Admit(OwnedFd(fd));
      } else if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        backoff = !ShedOne();
      }
    }
  }

  // Out of descriptors: accepts and closes one waiting client with the reserve descriptor, so it
  // learns at once and poll stops reporting it; false when there is no reserve to spend.
  bool ShedOne() {
    if (reserve_.get() < 0) {
      reserve_.reset(::open("/dev/null", O_RDONLY | O_CLOEXEC));
      return false;
    }
    reserve_.reset();
    const int fd = ::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) ::close(fd);
    reserve_.reset(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    Refuse("out of file descriptors");
    return fd >= 0;
  }

  void Admit(OwnedFd fd) {
    std::string who;
    if (!PeerAllowed(fd.get(), options_.allow_gid, &who)) {
      Refuse(who + " is not allowed to connect (its uid is not the server's)");
      return;
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (connections_.size() >= std::max<size_t>(options_.max_connections, 1)) {
      Refuse(StrCat(who, ": already ", connections_.size(), " connections (the maximum)"));
      return;
    }
    Connection& c = connections_.emplace_back();
    c.fd = std::move(fd);
    c.index = next_client_.fetch_add(1);
    c.server = this;
    const int err = ::pthread_create(&c.thread, nullptr, &CacheServerImpl::ServeMain, &c);
    if (err != 0) {
      connections_.pop_back();  // closes the descriptor: that client sees the connection close
      Refuse(StrCat(who, ": cannot start a thread (", std::strerror(err), ")"));
    }
  }

  static void* ServeMain(void* arg) {
    Connection* c = static_cast<Connection*>(arg);
    CacheServerImpl* self = c->server;
    self->service_.Serve(c->fd.get(), c->index, self->stopping_);
    {
      std::lock_guard<std::mutex> lock(self->mu_);
      c->fd.reset();  // the descriptor is free as soon as the client is done
      c->done = true;
    }
    self->Wake();  // the acceptor joins this thread
    return nullptr;
  }

  // Joins the threads of closed connections.
  void Reap() {
    std::list<Connection> finished;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto it = connections_.begin(); it != connections_.end();) {
        auto next = std::next(it);
        if (it->done) finished.splice(finished.end(), connections_, it);
        it = next;
      }
    }
    for (Connection& c : finished) ::pthread_join(c.thread, nullptr);
  }

  void RemoveOwnSocket() {
    struct stat st {};
    if (::lstat(options_.socket_path.c_str(), &st) == 0 &&
        std::make_pair(st.st_dev, st.st_ino) == socket_inode_) {
      ::unlink(options_.socket_path.c_str());  // the socket this server made, not a successor's
    }
  }

  const CacheServerOptions options_;
  cache_internal::CacheService service_;
  OwnedFd listener_;
  OwnedFd reserve_;  // spent to accept (and close) a client when out of descriptors
  std::pair<dev_t, ino_t> socket_inode_{0, 0};
  int wake_[2] = {-1, -1};
  std::atomic<bool> stopping_{false};
  std::atomic<uint32_t> next_client_{0};
  std::atomic<uint64_t> refused_{0};
  std::chrono::steady_clock::time_point last_refusal_log_{};  // the acceptor's
  pthread_t acceptor_{};
  bool acceptor_started_ = false;
  std::mutex mu_;  // guards connections_ and their fd and done
  std::list<Connection> connections_;
};

}  // namespace

Result<std::unique_ptr<CacheServer>> CacheServer::Start(TieredCache* cache,
                                                        CacheServerOptions options) {
  if (cache == nullptr) return Status::InvalidArgument("cache server: the cache is null");
  DLIO_ASSIGN_OR_RETURN(auto dirs, cache_internal::AllowedDirs::Make(
                                       options.data_dirs, "cache server data directories"));
  auto server = std::make_unique<CacheServerImpl>(cache, std::move(options), std::move(dirs));
  DLIO_RETURN_NOT_OK(server->Listen());
  return std::unique_ptr<CacheServer>(std::move(server));
}

Result<std::unique_ptr<Storage>> NewConfinedCacheSource(std::unique_ptr<Storage> source,
                                                        const std::vector<std::string>& data_dirs,
                                                        const std::string& key) {
  DLIO_ASSIGN_OR_RETURN(auto dirs, cache_internal::AllowedDirs::Make(data_dirs, key));
  return cache_internal::NewConfinedSource(std::move(source), std::move(dirs));
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
