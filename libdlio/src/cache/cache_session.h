// The requests of a CacheServer's connections (dlio/cache_server.h), apart from the socket they
// arrive on: what the connections of one server share (the cache, the data directories, the
// clients' kFuture lists, what was handed out) and the loop that answers one connection. The
// fuzz target of the wire protocol drives Serve over a socketpair.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "cache/beneath.h"
#include "cache/cache_wire.h"
#include "dlio/cache.h"
#include "dlio/cache_server.h"

namespace dlio::cache_internal {

// `text` with every byte outside printable ASCII (and the backslash) escaped as \xHH, so a
// client's words cannot forge or break log lines.
std::string Printable(std::string_view text);

// Safe for concurrent use: one Serve per connection, from many threads.
class CacheService {
 public:
  // `cache` must outlive it; options' log, source_cost and default_future are used.
  CacheService(TieredCache* cache, const CacheServerOptions& options, AllowedDirs dirs);

  // Answers the requests of client `index` on `fd` until the client closes, sends something
  // malformed (logged) or `stopping` is set. Reads a payload as its bytes arrive, each op up to
  // cache_wire::MaxRequestPayload; refuses any descriptor a client sends. Does not close `fd`.
  void Serve(int fd, uint32_t index, const std::atomic<bool>& stopping);

  void Log(const std::string& line) const;

 private:
  static constexpr uint32_t kDefaultFuture = UINT32_MAX;  // the --future list's slot in futures_

  struct FutureList {
    std::vector<std::string> paths;
    size_t next = 0;  // the first of `paths` not opened yet
  };
  // One connection's state.
  struct Client {
    uint32_t index = 0;
    std::string name;      // for logs, printable
    uint64_t refused = 0;  // opens refused (the first is logged)
    bool warned_future = false;
    bool warned_report = false;
  };

  // One request; returns why the connection must close ("" to go on).
  std::string Handle(int fd, Client* client, cache_wire::Op op, const std::string& payload);
  int SendOpen(int fd, Client* client, const std::string& path);
  void CreditReport(Client* client, const std::string& payload);
  void SetClientFuture(Client* client, const std::string& payload);
  void AdvanceFuture(uint32_t index, const std::string& path);
  void DropFuture(uint32_t index);
  void SetFuture();

  TieredCache* const cache_;
  const std::function<void(const std::string&)> log_;
  const std::string socket_path_;
  const AllowedDirs dirs_;
  cache_wire::HelloReply hello_;
  std::mutex future_mu_;  // guards futures_
  std::map<uint32_t, FutureList> futures_;
  std::mutex handed_mu_;  // guards handed_
  // The size of every path whose open was answered: a read report of it counts at most that
  // many bytes, so no client can wrap (or inflate past a whole read of the file) the counters.
  std::unordered_map<std::string, uint64_t> handed_;
};

}  // namespace dlio::cache_internal
