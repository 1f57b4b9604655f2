// The client's side of cache_wire.h's transport, with a deadline on every wait: a stopped or
// unresponsive server costs the program at most DLIO_CACHE_TIMEOUT_MS per request, never a hang.
// Raw system calls on a nonblocking socket, ppoll between attempts (no hook of any preloaded
// library sees them). Every function returns 0 or an errno value: ETIMEDOUT when the deadline
// passed, ECONNRESET when the server closed the connection, EPROTO for a malformed message.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cache/cache_wire.h"

namespace dlio::cache_preload {

// CLOCK_MONOTONIC, in nanoseconds.
int64_t MonotonicNs();

// A replies' payload the client accepts (its replies are small: a struct and an error message).
inline constexpr uint64_t kMaxReplyPayload = uint64_t{1} << 20;

// Connects a close-on-exec, nonblocking AF_UNIX stream socket to `path` by `deadline_ns` (a
// listener whose backlog is full is tried again). On success `*fd` is the socket.
int ConnectBy(const char* path, int64_t deadline_ns, int* fd);

// Sends a header and a payload of two parts (either may be empty).
int SendMessageBy(int fd, cache_wire::Op op, const void* a, size_t a_len, const void* b,
                  size_t b_len, int64_t deadline_ns);

// Reads exactly `n` bytes. A descriptor that comes with their first byte goes to `*received_fd`
// (close-on-exec) when `received_fd` is not null and holds -1; any other descriptor, a second one
// or truncated control data refuses the message: all closed, EBADMSG.
int RecvAllBy(int fd, void* data, size_t n, int64_t deadline_ns, int* received_fd = nullptr);

// Reads a header and checks its magic, version and payload size (at most kMaxReplyPayload).
int RecvHeaderBy(int fd, cache_wire::WireHeader* h, int64_t deadline_ns,
                 int* received_fd = nullptr);

}  // namespace dlio::cache_preload
