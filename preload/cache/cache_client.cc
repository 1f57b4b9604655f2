#include "cache_client.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cache_files.h"
#include "cache_socket.h"
#include "common/env.h"
#include "common/fd_hooks.h"
#include "common/path_filter.h"
#include "common/private_fd.h"

namespace dlio::cache_preload {
namespace wire = dlio::cache_wire;
namespace {

std::atomic<bool> g_enabled{false};
preload::PathFilter g_filter;  // constant-initialized; configured by the constructor

constexpr int64_t kDefaultTimeoutMs = 10000;
constexpr int64_t kMaxTimeoutMs = 24LL * 3600 * 1000;

// The connection (PrivateFd::Get(): a high number, hidden from the program), its mutex (one
// request at a time) and what the server said in its hello.
struct Client {
  pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
  const char* socket_path = nullptr;
  const char* future_path = nullptr;  // DLIO_CACHE_FUTURE, sent on connect (not by fork children)
  int64_t timeout_ms = kDefaultTimeoutMs;  // DLIO_CACHE_TIMEOUT_MS: the longest wait per request
  bool given_up = false;
  bool warned = false;
  uint64_t socket_ino = 0;  // the connection's socket, to notice a number replaced behind our back
  std::atomic<uint64_t> latency_ns{0};
  std::atomic<uint64_t> bytes_per_s{0};
};
Client g_client;

preload::PrivateFd& Conn() { return preload::PrivateFd::Get(); }

int64_t Deadline() { return MonotonicNs() + g_client.timeout_ms * 1000000; }

class Locked {
 public:
  Locked() { pthread_mutex_lock(&g_client.mu); }
  ~Locked() { pthread_mutex_unlock(&g_client.mu); }
  Locked(const Locked&) = delete;
  Locked& operator=(const Locked&) = delete;
};

// Raw system calls: nothing here goes through the hooks of any preloaded library (the tracer's).
void RawClose(int fd) { syscall(SYS_close, fd); }

void WriteStderr(const char* text) {
  size_t n = std::strlen(text);
  while (n > 0) {
    const long w = syscall(SYS_write, 2, text, n);
    if (w <= 0) return;
    text += w;
    n -= static_cast<size_t>(w);
  }
}

// Drops the connection for the rest of the process (a reply still on its way is never read as
// the answer to a later request); one warning line the first time. Never called holding a Use.
void GiveUp(const char* what, int err) {
  Conn().Close();
  g_client.given_up = true;
  if (g_client.warned) return;
  g_client.warned = true;
  char why[160];
  if (err == ETIMEDOUT) {
    std::snprintf(why, sizeof why, "no answer within %lld ms, DLIO_CACHE_TIMEOUT_MS",
                  static_cast<long long>(g_client.timeout_ms));
  } else {
    std::snprintf(why, sizeof why, "%s", std::strerror(err));
  }
  char line[768];
  std::snprintf(line, sizeof line,
                "dlio cache: warning: cache server %s: %s (%s); reading the source directly\n",
                g_client.socket_path, what, why);
  WriteStderr(line);
}

// Reads and drops `n` payload bytes.
int Drain(int fd, uint64_t n, int64_t deadline) {
  char sink[256];
  while (n > 0) {
    const size_t k = n < sizeof sink ? static_cast<size_t>(n) : sizeof sink;
    if (const int err = RecvAllBy(fd, sink, k, deadline); err != 0) return err;
    n -= k;
  }
  return 0;
}

// Reads a reply of op `want` whose payload starts with `*body` (sizeof(T) bytes); the rest of the
// payload (an error message) is dropped. Returns 0, or an errno value (EPROTO: not that reply).
template <typename T>
int RecvReply(int fd, wire::Op want, T* body, int64_t deadline, int* received_fd = nullptr) {
  wire::WireHeader h;
  if (const int err = RecvHeaderBy(fd, &h, deadline, received_fd); err != 0) return err;
  if (h.op != static_cast<uint16_t>(want) || h.payload_bytes < sizeof(T)) return EPROTO;
  if (const int err = RecvAllBy(fd, body, sizeof(T), deadline); err != 0) return err;
  return Drain(fd, h.payload_bytes - sizeof(T), deadline);
}

// One request and (when `reply` is set) its reply of op `want`, within one timeout. Requires the
// lock and a connection.
template <typename T>
int Exchange(wire::Op op, const void* a, size_t a_len, const void* b, size_t b_len, wire::Op want,
             T* reply, int* received_fd = nullptr) {
  preload::PrivateFd::Use use(Conn());
  struct stat st;
  if (syscall(SYS_fstat, use.fd(), &st) != 0 || st.st_ino != g_client.socket_ino) {
    // The program replaced the number with a raw system call: it is the program's now, never
    // written to (nor closed).
    Conn().Drop();
    return ENOTCONN;
  }
  const int64_t deadline = Deadline();
  int err = SendMessageBy(use.fd(), op, a, a_len, b, b_len, deadline);
  if (err == 0 && reply != nullptr) err = RecvReply(use.fd(), want, reply, deadline, received_fd);
  return err;
}

// The whole of DLIO_CACHE_FUTURE (malloc'ed; nullptr and *len 0 when unreadable).
char* ReadFutureFile(size_t* len) {
  *len = 0;
  const long fd = syscall(SYS_openat, AT_FDCWD, g_client.future_path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  size_t cap = 1 << 16;
  char* data = static_cast<char*>(std::malloc(cap));
  while (data != nullptr) {
    if (*len == cap) {
      char* grown = static_cast<char*>(std::realloc(data, cap * 2));
      if (grown == nullptr) break;
      data = grown;
      cap *= 2;
    }
    const long r = syscall(SYS_read, fd, data + *len, cap - *len);
    if (r <= 0) break;
    *len += static_cast<size_t>(r);
  }
  RawClose(static_cast<int>(fd));
  return data;
}

// Sends DLIO_CACHE_FUTURE's paths (kFuture); a missing file is warned about and skipped.
int SendFuture() {
  size_t len = 0;
  char* data = ReadFutureFile(&len);
  if (data == nullptr || len == 0) {
    char line[640];
    std::snprintf(line, sizeof line,
                  "dlio cache: warning: DLIO_CACHE_FUTURE %s is missing or empty: no future "
                  "accesses sent\n",
                  g_client.future_path);
    WriteStderr(line);
    std::free(data);
    return 0;
  }
  if (data[len - 1] != '\n') {  // the last path ends with '\n' too
    char* grown = static_cast<char*>(std::realloc(data, len + 1));
    if (grown == nullptr) {
      std::free(data);
      return ENOMEM;
    }
    data = grown;
    data[len++] = '\n';
  }
  wire::Ack ack;
  const int err = Exchange(wire::Op::kFuture, data, len, nullptr, 0, wire::Op::kAck, &ack);
  std::free(data);
  return err != 0 ? err : ack.error;
}

// Connects and greets the server, holding the lock; false when it cannot be used.
bool ConnectLocked() {
  if (Conn().Peek() >= 0) return true;
  if (g_client.given_up) return false;
  int fd = -1;
  if (const int err = ConnectBy(g_client.socket_path, Deadline(), &fd); err != 0) {
    return GiveUp("cannot connect", err), false;
  }
  // Out of the program's way: its descriptors keep the numbers they have without the cache.
  if (Conn().Adopt(fd, /*keep_low=*/false) < 0) return GiveUp("no free descriptor", EMFILE), false;
  {
    preload::PrivateFd::Use use(Conn());
    struct stat st;
    g_client.socket_ino = syscall(SYS_fstat, use.fd(), &st) == 0 ? st.st_ino : 0;
  }
  char name[48];
  std::snprintf(name, sizeof name, "pid %ld", static_cast<long>(syscall(SYS_getpid)));
  wire::HelloReply hello;
  int err = Exchange(wire::Op::kHello, name, std::strlen(name), nullptr, 0, wire::Op::kHelloReply,
                     &hello);
  if (err != 0) return GiveUp("no hello", err), false;
  g_client.latency_ns.store(hello.source_latency_ns, std::memory_order_relaxed);
  g_client.bytes_per_s.store(hello.source_bytes_per_s, std::memory_order_relaxed);
  if (g_client.future_path != nullptr) {
    err = SendFuture();
    g_client.future_path = nullptr;  // once per process
    if (err != 0) return GiveUp("future accesses refused", err), false;
  }
  return true;
}

// DLIO_CACHE_TIMEOUT_MS: milliseconds, 1 to one day; anything else is warned about once.
void ConfigureTimeout() {
  const preload::EnvIntResult r =
      preload::EnvInt("DLIO_CACHE_TIMEOUT_MS", 1, kMaxTimeoutMs, &g_client.timeout_ms);
  if (r != preload::EnvIntResult::kBad) return;
  char line[256];
  std::snprintf(line, sizeof line,
                "dlio cache: warning: DLIO_CACHE_TIMEOUT_MS='%.40s' is not a number of "
                "milliseconds from 1 to %lld: %lld used\n",
                preload::EnvValue("DLIO_CACHE_TIMEOUT_MS"), static_cast<long long>(kMaxTimeoutMs),
                static_cast<long long>(kDefaultTimeoutMs));
  WriteStderr(line);
}

void PrepareFork() {
  pthread_mutex_lock(&g_client.mu);
  FileTable::Get().LockForFork();
}

void ParentAfterFork() {
  FileTable::Get().UnlockAfterFork();
  pthread_mutex_unlock(&g_client.mu);
}

// The child must not talk on the parent's connection: it connects anew when it first opens a file
// (a client of its own; its future is not the parent's, so none is sent).
void ChildAfterFork() {
  FileTable::Get().UnlockAfterFork();
  pthread_mutex_init(&g_client.mu, nullptr);
  Conn().ResetUsersAfterFork();
  Conn().Close();
  g_client.future_path = nullptr;
}

__attribute__((constructor)) void Init() {
  HookScope scope;
  const char* socket_path = preload::EnvValue("DLIO_CACHE_SOCKET");
  const char* dirs = preload::EnvValue("DLIO_CACHE_DATA_DIRS");
  if (socket_path == nullptr) return;
  if (dirs == nullptr) {
    WriteStderr(
        "dlio cache: warning: DLIO_CACHE_SOCKET is set but DLIO_CACHE_DATA_DIRS is not: "
        "no file goes through the cache\n");
    return;
  }
  g_client.socket_path = socket_path;
  ConfigureTimeout();
  if (const char* future = preload::EnvValue("DLIO_CACHE_FUTURE"); future != nullptr) {
    g_client.future_path = future;
  }
  g_filter.Configure(dirs);
  pthread_atfork(PrepareFork, ParentAfterFork, ChildAfterFork);
  g_enabled.store(true, std::memory_order_release);
}

}  // namespace

bool Enabled() { return g_enabled.load(std::memory_order_acquire); }

bool UnderDataDirs(const char* path, size_t len) { return g_filter.Traced(path, len); }

SourceCost Cost() {
  SourceCost c;
  c.latency_ns = g_client.latency_ns.load(std::memory_order_relaxed);
  c.bytes_per_s = g_client.bytes_per_s.load(std::memory_order_relaxed);
  return c;
}

bool OpenThroughServer(const char* path, size_t len, Opened* out) {
  Locked lock;
  if (!ConnectLocked()) return false;
  int received = -1;
  wire::OpenReply reply;
  const int err =
      Exchange(wire::Op::kOpen, path, len, nullptr, 0, wire::Op::kOpenReply, &reply, &received);
  if (err != 0) {
    if (received >= 0) RawClose(received);
    GiveUp("open failed", err);
    return false;
  }
  out->fd = -1;
  out->tier = -1;
  if (reply.error == 0 && reply.tier >= 0 && received >= 0) {
    out->fd = received;
    out->tier = reply.tier;
  } else if (received >= 0) {
    RawClose(received);
  }
  return true;
}

void ReportRead(const char* path, size_t len, int tier, uint64_t bytes) {
  wire::ReadReport report;
  report.tier = tier;
  report.bytes = bytes;
  Locked lock;
  if (!ConnectLocked()) return;
  const int err = Exchange<wire::Ack>(wire::Op::kReadReport, &report, sizeof report, path, len,
                                      wire::Op::kAck, nullptr);
  if (err != 0) GiveUp("read report failed", err);
}

void Invalidate(const char* path, size_t len) {
  Locked lock;
  if (!ConnectLocked()) return;
  wire::Ack ack;
  const int err = Exchange(wire::Op::kInvalidate, path, len, nullptr, 0, wire::Op::kAck, &ack);
  if (err != 0) GiveUp("invalidate failed", err);
}

}  // namespace dlio::cache_preload
