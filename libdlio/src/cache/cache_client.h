// A client of a CacheServer (dlio/cache_server.h) over the wire protocol of cache/cache_wire.h: the
// other ranks of a node use it, and the tests. Not the preload library's (which links no libdlio).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cache/cache_wire.h"
#include "dlio/cache.h"
#include "dlio/status.h"
#include "dlio/storage.h"

namespace dlio::cache_internal {

// One connection. Safe for concurrent use (one request at a time: calls take turns). Errors name
// the socket; a server that closed the connection is Unavailable.
class CacheClient {
 public:
  // Connects to `socket_path` and says hello as `name` ("rank 3").
  static Result<std::unique_ptr<CacheClient>> Connect(const std::string& socket_path,
                                                      const std::string& name);
  const cache_wire::HelloReply& hello() const { return hello_; }
  const std::string& socket_path() const { return socket_path_; }

  struct Opened {
    OwnedFd fd;  // the copy's descriptor when reply.tier >= 0
    cache_wire::OpenReply reply;
  };
  // kOpen. A server-side error (no such source file) is a Status carrying its message.
  Result<Opened> Open(const std::string& path);
  Status Future(const std::vector<std::string>& paths);
  Status ReadReport(const std::string& path, int tier, uint64_t bytes);
  Status Invalidate(const std::string& path);
  // kStats (take = false) or kTakeStats: the server's CacheStats as JSON.
  Result<std::string> Stats(bool take);

 private:
  CacheClient(std::string socket_path, int fd) : socket_path_(std::move(socket_path)), fd_(fd) {}
  // Sends a request and reads an Ack; its payload (after the Ack) goes to `out` when not null.
  Status Call(cache_wire::Op op, const void* a, size_t a_len, const void* b, size_t b_len,
              std::string* out);
  Status WireError(int err, const char* what) const;

  const std::string socket_path_;
  std::mutex mu_;
  OwnedFd fd_;
  cache_wire::HelloReply hello_;
};

// A TieredCache served by the CacheServer at `socket_path` (connected as `client_name`): its
// opens go to the server, files it hands over read the copy's descriptor (or `source`, which must
// outlive it, when the server says tier -1), and their reads are reported to the server when
// they close. Stats: the server's when `reports_stats` (one client of a node), else empty.
Result<std::unique_ptr<TieredCache>> ConnectRemoteCache(const std::string& socket_path,
                                                        const std::string& client_name,
                                                        Storage* source, bool reports_stats);

}  // namespace dlio::cache_internal
