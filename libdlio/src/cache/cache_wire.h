// The wire protocol of a cache server: one process (`dlio-run cache-serve`, or the leader rank of
// a node) owns a TieredCache and hands its clients (libdlio_cache_preload.so in unmodified
// programs, the other ranks of the node) descriptors of complete copies, so every client reads
// the same node-local tiers and no file is copied twice per node (docs/caching.md).
//
// Header-only and dependency-free: the preload library includes it without libdlio (no
// allocation, no exceptions). Transport: a Unix-domain SOCK_STREAM socket; every message is a
// WireHeader followed by `payload_bytes` bytes; a reply to kOpen carries the copy's descriptor
// as SCM_RIGHTS ancillary data on its first byte when `tier` >= 0; no other message carries a
// descriptor, and a receiver refuses one that does (RecvAll). One request at a time per
// connection: a client sends a request and reads its reply before the next (threads of a client
// use a connection each, or lock one). Who may connect and what a server hands out:
// docs/caching.md, "Trust model".
#pragma once

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>

namespace dlio::cache_wire {

inline constexpr uint32_t kMagic = 0x31434c44;  // "DLC1" in memory order
inline constexpr uint16_t kVersion = 1;
// Longest payload either side accepts at all (a server's own limit per op is lower:
// MaxRequestPayload).
inline constexpr uint64_t kMaxPayload = uint64_t{1} << 30;

enum class Op : uint16_t {
  // client -> server. Payload: the client's name for logs ("pid 123", "rank 3"). Reply:
  // HelloReply.
  kHello = 1,
  // client -> server. Payload: the absolute path of a source file, opened for reading. Reply:
  // OpenReply (+ the copy's descriptor when tier >= 0; -1: read the source yourself). Counts as
  // the open of the file for the policy (hit, miss, placement).
  kOpen = 2,
  // client -> server. Payload: this client's future opens, in order, as absolute paths each
  // ended by '\n' (clairvoyant); replaces its previous list. The server merges the lists of its
  // clients by position (client c's i-th open after every client's (i-1)-th). Reply: Ack.
  kFuture = 3,
  // client -> server. Payload: ReadReport then the path: bytes read from a descriptor kOpen
  // returned (or from the source, tier -1), sent when the client closes it. No reply.
  kReadReport = 4,
  // client -> server. Payload: the path of a source file the client wrote, renamed or removed.
  // Reply: Ack.
  kInvalidate = 5,
  // client -> server. Payload: none. Reply: Ack whose payload is the server's CacheStats as
  // JSON (the per-level counters since the last kTakeStats).
  kStats = 6,
  kTakeStats = 7,  // as kStats, then resets the counters (per-epoch statistics)
  // server -> client, the reply to anything but kOpen and kHello. Payload: Ack, then an error
  // message when `error` != 0, else the op's own payload.
  kAck = 100,
  kHelloReply = 101,
  kOpenReply = 102,
};

// The longest request payload a server reads for `op` (a longer one closes the connection): a
// name, a path (PATH_MAX), a ReadReport and its path, or a kFuture list. A server reads a
// payload as its bytes arrive, so a client costs it what it sends, never what it announces.
inline constexpr uint64_t kMaxNameBytes = 1024;
inline constexpr uint64_t kMaxPathBytes = 4096;
inline constexpr uint64_t kMaxFutureBytes = uint64_t{256} << 20;
inline constexpr uint64_t MaxRequestPayload(Op op);

struct WireHeader {
  uint32_t magic = kMagic;
  uint16_t version = kVersion;
  uint16_t op = 0;  // an Op
  uint64_t payload_bytes = 0;
};
static_assert(sizeof(WireHeader) == 16);

struct Ack {
  int32_t error = 0;  // 0, or an errno value; an error message follows in the payload
  uint32_t reserved = 0;
};

struct HelloReply {
  uint32_t client_index = 0;  // the server's number for this client (position in kFuture merges)
  uint32_t policy = 0;        // the server's CachePolicyKind, as an integer
  uint32_t tiers = 0;         // number of tiers (the source not counted)
  uint32_t reserved = 0;
  // What the server's source emulates per call and per byte (a `slow` source: latency_us and
  // bandwidth; 0 and 0 otherwise). A client that reads the source itself through plain system
  // calls (the preload library) adds these costs to its reads so it sees the same storage.
  uint64_t source_latency_ns = 0;
  uint64_t source_bytes_per_s = 0;  // 0: no bandwidth cap
};

struct OpenReply {
  int32_t error = 0;     // 0, or an errno value (ENOENT: no such source file); message follows
  int32_t tier = -1;     // the tier whose complete copy the attached descriptor reads; -1: none
  uint64_t size = 0;     // the file's bytes (the source's size, which the copy holds)
  int64_t mtime_ns = 0;  // the source's mtime the copy was made from (0 when unknown)
  uint32_t flags = 0;    // kOpenReadThrough: the copy was made during this open (lru's miss)
  uint32_t reserved = 0;
};
inline constexpr uint32_t kOpenReadThrough = 1;

struct ReadReport {
  int32_t tier = -1;  // as OpenReply::tier
  uint32_t reserved = 0;
  uint64_t bytes = 0;  // bytes the client read from that descriptor (or from the source)
};

inline constexpr uint64_t MaxRequestPayload(Op op) {
  switch (op) {
    case Op::kHello:
      return kMaxNameBytes;
    case Op::kOpen:
    case Op::kInvalidate:
      return kMaxPathBytes;
    case Op::kReadReport:
      return sizeof(ReadReport) + kMaxPathBytes;
    case Op::kFuture:
      return kMaxFutureBytes;
    default:
      return 0;  // kStats, kTakeStats: none; replies are no requests
  }
}

// Writes all of [data, data + n) to `fd`, retrying on EINTR and short writes; MSG_NOSIGNAL, so a
// closed peer is EPIPE, not a signal. `pass_fd` >= 0 goes with the first byte as SCM_RIGHTS.
// Returns 0 or an errno value.
inline int SendAll(int fd, const void* data, size_t n, int pass_fd = -1) {
  const char* p = static_cast<const char*>(data);
  bool fd_sent = pass_fd < 0;
  while (n > 0) {
    iovec iov{const_cast<char*>(p), n};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    if (!fd_sent) {
      msg.msg_control = control;
      msg.msg_controllen = sizeof(control);
      cmsghdr* c = CMSG_FIRSTHDR(&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int));
      memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
    }
    const ssize_t w = sendmsg(fd, &msg, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    fd_sent = true;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return 0;
}

// Closes every descriptor of the SCM_RIGHTS control data of `msg` (received with `msg`), except
// the first when `keep` is not null and *keep is -1 (then stored there). Returns how many came.
inline int TakeDescriptors(msghdr* msg, int* keep) {
  int count = 0;
  for (cmsghdr* c = CMSG_FIRSTHDR(msg); c != nullptr; c = CMSG_NXTHDR(msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < n; ++i) {
      int got = -1;
      memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      ++count;
      if (keep != nullptr && *keep < 0) {
        *keep = got;
      } else {
        ::close(got);
      }
    }
  }
  return count;
}

// Reads exactly `n` bytes into `data`, retrying on EINTR. A descriptor may come only where the
// protocol sends one (a kOpenReply's header, one descriptor): with `received_fd` not null and
// *received_fd -1, one descriptor is stored there (close-on-exec). Any other descriptor, a second
// one, or control data the kernel truncated (MSG_CTRUNC: descriptors were dropped) refuses the
// message: every descriptor received is closed (the kept one too, *received_fd back to -1) and
// EBADMSG returned. Returns 0, ECONNRESET when the peer closed first, or another errno value.
inline int RecvAll(int fd, void* data, size_t n, int* received_fd = nullptr) {
  char* p = static_cast<char*>(data);
  const bool may_take = received_fd != nullptr && *received_fd < 0;
  while (n > 0) {
    iovec iov{p, n};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    // Room for the one descriptor a message may carry; more are closed as they come, and what
    // does not fit is dropped by the kernel (MSG_CTRUNC), never installed.
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    const ssize_t r = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
    if (r < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    const bool can_take = may_take && p == static_cast<char*>(data);  // with the first byte only
    int kept = -1;
    const int fds = TakeDescriptors(&msg, can_take ? &kept : nullptr);
    if (kept >= 0) *received_fd = kept;
    const bool refused = (msg.msg_flags & MSG_CTRUNC) != 0 || fds > 1 || (fds == 1 && !can_take);
    if (refused) {
      if (may_take && *received_fd >= 0) {
        ::close(*received_fd);
        *received_fd = -1;
      }
      return EBADMSG;
    }
    if (r == 0) return ECONNRESET;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return 0;
}

// Sends a header and a payload made of two parts (either may be empty). Returns 0 or errno.
inline int SendMessage(int fd, Op op, const void* a, size_t a_len, const void* b = nullptr,
                       size_t b_len = 0, int pass_fd = -1) {
  WireHeader h;
  h.op = static_cast<uint16_t>(op);
  h.payload_bytes = a_len + b_len;
  int err = SendAll(fd, &h, sizeof(h), pass_fd);
  if (err == 0 && a_len > 0) err = SendAll(fd, a, a_len);
  if (err == 0 && b_len > 0) err = SendAll(fd, b, b_len);
  return err;
}

// Reads a header and checks its magic, version and payload size (EPROTO otherwise). A
// descriptor sent with the header lands in `*received_fd` (see RecvAll).
inline int RecvHeader(int fd, WireHeader* h, int* received_fd = nullptr) {
  const int err = RecvAll(fd, h, sizeof(*h), received_fd);
  if (err != 0) return err;
  if (h->magic != kMagic || h->version != kVersion || h->payload_bytes > kMaxPayload) {
    return EPROTO;
  }
  return 0;
}

}  // namespace dlio::cache_wire
