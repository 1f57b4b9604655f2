#include "cache/cache_session.h"

#include <sys/socket.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace dlio::cache_internal {
namespace wire = cache_wire;
namespace {

constexpr size_t kPayloadChunk = 64 << 10;  // a payload grows by this much as its bytes arrive

int ErrnoOf(const Status& status) {
  switch (status.code()) {
    case StatusCode::kNotFound:
      return ENOENT;
    case StatusCode::kInvalidArgument:
      return EINVAL;
    case StatusCode::kResourceExhausted:
      return ENOSPC;
    case StatusCode::kFailedPrecondition:
      return EACCES;
    default:
      return EIO;
  }
}

bool ValidPath(const std::string& path) {
  return !path.empty() && path[0] == '/' && path.find('\0') == std::string::npos;
}

std::string Reply(int err) { return err == 0 ? "" : StrCat("sending the reply: ", strerror(err)); }

int SendAck(int fd, int error, const std::string& body) {
  wire::Ack ack;
  ack.error = error;
  return wire::SendMessage(fd, wire::Op::kAck, &ack, sizeof(ack), body.data(), body.size());
}

// Reads a payload of `n` bytes into `out`, growing it only as bytes arrive.
int RecvPayload(int fd, uint64_t n, std::string* out) {
  out->clear();
  while (out->size() < n) {
    const size_t at = out->size();
    const size_t chunk = static_cast<size_t>(std::min<uint64_t>(kPayloadChunk, n - at));
    out->resize(at + chunk);
    if (const int err = wire::RecvAll(fd, out->data() + at, chunk); err != 0) return err;
  }
  return 0;
}

// Whether the copy a handoff reads was made from the file `resolved` (an O_PATH descriptor of
// what the client's path resolved to): same device, inode, size and mtime.
bool SameFile(int resolved, const CacheHandoff& handoff) {
  struct stat st {};
  if (::fstat(resolved, &st) != 0) return false;
  const int64_t mtime_ns =
      static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  return static_cast<uint64_t>(st.st_dev) == handoff.source_dev &&
         static_cast<uint64_t>(st.st_ino) == handoff.source_ino &&
         static_cast<uint64_t>(st.st_size) == handoff.size && mtime_ns == handoff.mtime_ns;
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

const char* OpName(uint16_t op) {
  switch (static_cast<wire::Op>(op)) {
    case wire::Op::kHello:
      return "kHello";
    case wire::Op::kOpen:
      return "kOpen";
    case wire::Op::kFuture:
      return "kFuture";
    case wire::Op::kReadReport:
      return "kReadReport";
    case wire::Op::kInvalidate:
      return "kInvalidate";
    case wire::Op::kStats:
      return "kStats";
    case wire::Op::kTakeStats:
      return "kTakeStats";
    default:
      return "an unknown op";
  }
}

}  // namespace

std::string Printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto b = static_cast<unsigned char>(c);
    if (b >= 0x20 && b < 0x7f && b != '\\') {
      out += c;
    } else {
      char hex[5];
      std::snprintf(hex, sizeof(hex), "\\x%02x", b);
      out += hex;
    }
  }
  return out;
}

CacheService::CacheService(TieredCache* cache, const CacheServerOptions& options, AllowedDirs dirs)
    : cache_(cache), log_(options.log), socket_path_(options.socket_path), dirs_(std::move(dirs)) {
  hello_.policy = static_cast<uint32_t>(cache_->policy());
  hello_.tiers = static_cast<uint32_t>(cache_->Stats().tiers.size());
  hello_.source_latency_ns = options.source_cost.latency_ns;
  hello_.source_bytes_per_s = options.source_cost.bytes_per_s;
  std::vector<std::string> future;
  for (const std::string& path : options.default_future) {
    if (dirs_.Under(path)) future.push_back(path);
  }
  if (!future.empty()) {
    futures_[kDefaultFuture].paths = std::move(future);
    SetFuture();
  }
}

void CacheService::Log(const std::string& line) const {
  if (log_) {
    log_(line);
  } else {
    std::fprintf(stderr, "dlio cache server %s: %s\n", socket_path_.c_str(), line.c_str());
  }
}

void CacheService::Serve(int fd, uint32_t index, const std::atomic<bool>& stopping) {
  Client client;
  client.index = index;
  client.name = StrCat("client ", index);
  std::string payload;
  while (true) {
    wire::WireHeader h;
    std::string problem;
    int err = wire::RecvHeader(fd, &h);
    if (err == 0 && h.payload_bytes > wire::MaxRequestPayload(static_cast<wire::Op>(h.op))) {
      problem = StrCat(OpName(h.op), " (", h.op, ") with a payload of ", h.payload_bytes,
                       " bytes, above its maximum of ",
                       wire::MaxRequestPayload(static_cast<wire::Op>(h.op)));
    }
    if (err == 0 && problem.empty()) err = RecvPayload(fd, h.payload_bytes, &payload);
    if (err == ECONNRESET || (err != 0 && stopping)) break;
    if (err == EPROTO) problem = "malformed message header";
    if (err == EBADMSG) problem = "a request carrying descriptors (closed, all of them)";
    if (err != 0 && problem.empty()) problem = strerror(err);
    if (problem.empty()) problem = Handle(fd, &client, static_cast<wire::Op>(h.op), payload);
    if (!problem.empty()) {
      Log(StrCat(client.name, ": closing the connection: ", problem));
      break;
    }
  }
  if (client.refused > 1) {
    Log(StrCat(client.name, ": ", client.refused, " opens refused in all"));
  }
  ::shutdown(fd, SHUT_RDWR);
  DropFuture(index);
}

std::string CacheService::Handle(int fd, Client* client, wire::Op op, const std::string& payload) {
  switch (op) {
    case wire::Op::kHello: {
      if (!payload.empty()) {
        client->name = StrCat(Printable(payload.substr(0, 200)), " (client ", client->index, ")");
      }
      wire::HelloReply reply = hello_;
      reply.client_index = client->index;
      return Reply(wire::SendMessage(fd, wire::Op::kHelloReply, &reply, sizeof(reply)));
    }
    case wire::Op::kOpen:
      if (!ValidPath(payload)) return "kOpen of a path that is not absolute";
      return Reply(SendOpen(fd, client, payload));
    case wire::Op::kFuture:
      SetClientFuture(client, payload);
      return Reply(SendAck(fd, 0, ""));
    case wire::Op::kReadReport:
      if (payload.size() < sizeof(wire::ReadReport)) {
        return "kReadReport shorter than its ReadReport";
      }
      CreditReport(client, payload);
      return "";
    case wire::Op::kInvalidate:
      if (!ValidPath(payload)) return "kInvalidate of a path that is not absolute";
      if (!dirs_.Under(payload)) {
        return Reply(SendAck(fd, EACCES,
                             StrCat(payload,
                                    ": refused by the cache server: not under a data "
                                    "directory of the server")));
      }
      cache_->Invalidate(payload);
      return Reply(SendAck(fd, 0, ""));
    case wire::Op::kStats:
    case wire::Op::kTakeStats: {
      const CacheStats stats = op == wire::Op::kStats ? cache_->Stats() : cache_->TakeStats();
      return Reply(SendAck(fd, 0, CacheStatsJson(stats)));
    }
    default:
      return StrCat("unknown op ", static_cast<unsigned>(op));
  }
}

int CacheService::SendOpen(int fd, Client* client, const std::string& path) {
  wire::OpenReply reply;
  auto resolved = dirs_.Open(path);  // what the kernel resolves, beneath a data directory
  if (!resolved.ok() && resolved.status().code() != StatusCode::kNotFound &&
      client->refused++ == 0) {
    Log(StrCat(client->name, ": refused: ", Printable(resolved.status().message())));
  }
  if (resolved.ok()) AdvanceFuture(client->index, path);
  const Result<CacheHandoff> handoff =
      resolved.ok() ? cache_->OpenForHandoff(path) : Result<CacheHandoff>(resolved.status());
  if (!handoff.ok()) {
    reply.error = ErrnoOf(handoff.status());
    const std::string message = handoff.status().message();
    return wire::SendMessage(fd, wire::Op::kOpenReply, &reply, sizeof(reply), message.data(),
                             message.size());
  }
  // A copy of another file than the one resolved (the path changed between the two): the client
  // reads the source itself, with its own permissions.
  const bool same = handoff->tier < 0 || SameFile(resolved->get(), *handoff);
  reply.tier = same ? handoff->tier : -1;
  reply.size = handoff->size;
  reply.mtime_ns = handoff->mtime_ns;
  reply.flags = handoff->read_through ? wire::kOpenReadThrough : 0;
  {
    std::lock_guard<std::mutex> lock(handed_mu_);
    handed_[path] = handoff->size;
  }
  const int pass = reply.tier >= 0 ? handoff->fd.get() : -1;
  return wire::SendMessage(fd, wire::Op::kOpenReply, &reply, sizeof(reply), nullptr, 0, pass);
}

void CacheService::CreditReport(Client* client, const std::string& payload) {
  wire::ReadReport report;
  std::memcpy(&report, payload.data(), sizeof(report));
  const std::string path = payload.substr(sizeof(report));
  uint64_t size = 0;
  bool known = false;
  {
    std::lock_guard<std::mutex> lock(handed_mu_);
    auto it = handed_.find(path);
    if (it != handed_.end()) {
      known = true;
      size = it->second;
    }
  }
  const bool tier_ok = report.tier >= -1 && report.tier < static_cast<int32_t>(hello_.tiers);
  if (!known || !tier_ok) {
    if (!client->warned_report) {
      client->warned_report = true;
      Log(StrCat(client->name, ": ignored a read report of tier ", report.tier, " of '",
                 Printable(path.substr(0, 200)),
                 "': no open of that path and tier was answered (logged once per client)"));
    }
    return;
  }
  // Bytes read from one descriptor count at most once the file's size (a client cannot wrap the
  // counters, nor inflate them past a whole read per report).
  cache_->CreditRead(report.tier, std::min(report.bytes, size));
}

void CacheService::SetClientFuture(Client* client, const std::string& payload) {
  if (!cache_->uses_future_accesses()) return;
  std::vector<std::string> paths = SplitLines(payload);
  const size_t before = paths.size();
  paths.erase(std::remove_if(paths.begin(), paths.end(),
                             [&](const std::string& p) { return !dirs_.Under(p); }),
              paths.end());
  if (paths.size() != before && !client->warned_future) {
    client->warned_future = true;
    Log(StrCat(client->name, ": kFuture: ", before - paths.size(),
               " paths not under a data directory of the server were dropped"));
  }
  std::lock_guard<std::mutex> lock(future_mu_);
  futures_[client->index] = FutureList{std::move(paths), 0};
  SetFuture();
}

// Moves a list past `path` when it is its next open, so a later merge starts where each client
// is: the client's own list; for a connection without one (a process opening on several
// connections, its list sent on the first), the first list whose next open `path` is, the
// --future list last.
void CacheService::AdvanceFuture(uint32_t index, const std::string& path) {
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

void CacheService::DropFuture(uint32_t index) {
  std::lock_guard<std::mutex> lock(future_mu_);
  if (futures_.erase(index) != 0) SetFuture();
}

// Merges the lists of futures_ (by client index, the --future list last) into the cache.
// Requires future_mu_ (or the constructor).
void CacheService::SetFuture() {
  std::vector<FutureListView> lists;
  for (const auto& [index, list] : futures_) lists.push_back({&list.paths, list.next});
  cache_->SetFutureAccesses(MergeFutureLists(lists));
}

}  // namespace dlio::cache_internal
