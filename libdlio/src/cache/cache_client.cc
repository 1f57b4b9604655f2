#include "cache/cache_client.h"

#include <sys/socket.h>
#include <sys/un.h>

namespace dlio::cache_internal {
namespace wire = cache_wire;
namespace {

// The server's error `err` with its message (which names the path and the cause).
Status ServerError(int err, const std::string& socket_path, const std::string& message) {
  std::string text = StrCat("cache server at ", socket_path, ": ", message);
  if (err == ENOENT) return Status::NotFound(std::move(text));
  if (err == EINVAL) return Status::InvalidArgument(std::move(text));
  return Status::IOError(std::move(text));
}

}  // namespace

Result<std::unique_ptr<CacheClient>> CacheClient::Connect(const std::string& socket_path,
                                                          const std::string& name) {
  sockaddr_un addr{};
  if (socket_path.size() >= sizeof(addr.sun_path)) {
    return Status::InvalidArgument("cache server socket ", socket_path, ": longer than ",
                                   sizeof(addr.sun_path) - 1, " bytes");
  }
  addr.sun_family = AF_UNIX;
  socket_path.copy(addr.sun_path, socket_path.size());
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::FromErrno(errno, "socket for the cache server " + socket_path);
  std::unique_ptr<CacheClient> client(new CacheClient(socket_path, fd));
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    return Status::FromErrno(errno, "connecting to the cache server at " + socket_path);
  }
  int err = wire::SendMessage(fd, wire::Op::kHello, name.data(), name.size());
  wire::WireHeader h;
  if (err == 0) err = wire::RecvHeader(fd, &h);
  if (err == 0 && (h.op != static_cast<uint16_t>(wire::Op::kHelloReply) ||
                   h.payload_bytes != sizeof(wire::HelloReply))) {
    err = EPROTO;
  }
  if (err == 0) err = wire::RecvAll(fd, &client->hello_, sizeof(client->hello_));
  if (err != 0) return client->WireError(err, "hello");
  return client;
}

Status CacheClient::WireError(int err, const char* what) const {
  if (err == ECONNRESET || err == EPIPE) {
    return Status::IOError("cache server at ", socket_path_, ": the connection closed (", what,
                           "): the server stopped or refused the request");
  }
  if (err == EPROTO) {
    return Status::IOError("cache server at ", socket_path_, ": malformed reply to ", what);
  }
  return Status::FromErrno(err, StrCat("cache server at ", socket_path_, " (", what, ")"));
}

Result<CacheClient::Opened> CacheClient::Open(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  const int fd = fd_.get();
  int err = wire::SendMessage(fd, wire::Op::kOpen, path.data(), path.size());
  wire::WireHeader h;
  Opened out;
  int received = -1;
  if (err == 0) err = wire::RecvHeader(fd, &h, &received);
  out.fd.reset(received);
  if (err == 0 && (h.op != static_cast<uint16_t>(wire::Op::kOpenReply) ||
                   h.payload_bytes < sizeof(wire::OpenReply))) {
    err = EPROTO;
  }
  if (err == 0) err = wire::RecvAll(fd, &out.reply, sizeof(out.reply));
  std::string message(err == 0 ? h.payload_bytes - sizeof(out.reply) : 0, '\0');
  if (err == 0 && !message.empty()) err = wire::RecvAll(fd, message.data(), message.size());
  if (err != 0) return WireError(err, "open");
  if (out.reply.error != 0) {
    return ServerError(out.reply.error, socket_path_, message.empty() ? path : message);
  }
  if (out.reply.tier >= 0 && out.fd.get() < 0) {
    return Status::IOError("cache server at ", socket_path_, ": no descriptor came with tier ",
                           out.reply.tier, " of ", path);
  }
  return out;
}

Status CacheClient::Call(wire::Op op, const void* a, size_t a_len, const void* b, size_t b_len,
                         std::string* out) {
  std::lock_guard<std::mutex> lock(mu_);
  const int fd = fd_.get();
  int err = wire::SendMessage(fd, op, a, a_len, b, b_len);
  if (op == wire::Op::kReadReport) return err == 0 ? Status::OK() : WireError(err, "read report");
  wire::WireHeader h;
  wire::Ack ack;
  if (err == 0) err = wire::RecvHeader(fd, &h);
  if (err == 0 &&
      (h.op != static_cast<uint16_t>(wire::Op::kAck) || h.payload_bytes < sizeof(ack))) {
    err = EPROTO;
  }
  if (err == 0) err = wire::RecvAll(fd, &ack, sizeof(ack));
  std::string payload(err == 0 ? h.payload_bytes - sizeof(ack) : 0, '\0');
  if (err == 0 && !payload.empty()) err = wire::RecvAll(fd, payload.data(), payload.size());
  if (err != 0) return WireError(err, "request");
  if (ack.error != 0) {
    return ServerError(ack.error, socket_path_, payload);
  }
  if (out != nullptr) *out = std::move(payload);
  return Status::OK();
}

Status CacheClient::Future(const std::vector<std::string>& paths) {
  std::string payload;
  for (const std::string& p : paths) {
    payload += p;
    payload += '\n';
  }
  return Call(wire::Op::kFuture, payload.data(), payload.size(), nullptr, 0, nullptr);
}

Status CacheClient::ReadReport(const std::string& path, int tier, uint64_t bytes) {
  wire::ReadReport report;
  report.tier = tier;
  report.bytes = bytes;
  return Call(wire::Op::kReadReport, &report, sizeof(report), path.data(), path.size(), nullptr);
}

Status CacheClient::Invalidate(const std::string& path) {
  return Call(wire::Op::kInvalidate, path.data(), path.size(), nullptr, 0, nullptr);
}

Result<std::string> CacheClient::Stats(bool take) {
  std::string json;
  DLIO_RETURN_NOT_OK(
      Call(take ? wire::Op::kTakeStats : wire::Op::kStats, nullptr, 0, nullptr, 0, &json));
  return json;
}

}  // namespace dlio::cache_internal
