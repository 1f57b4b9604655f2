// CacheServer: one process of a node owns a TieredCache and serves it over a Unix socket to
// other processes (the other ranks of the node, programs under libdlio_cache_preload.so): a
// client's open gets a descriptor of a complete copy (SCM_RIGHTS), so every process of the node
// reads the same node-local tiers and no file is copied twice per node. The protocol is
// libdlio/src/cache/cache_wire.h; docs/caching.md describes both.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dlio/cache.h"
#include "dlio/status.h"
#include "dlio/storage.h"

namespace dlio {

struct CacheServerOptions {
  // Where to listen. An existing socket there is replaced only when no process accepts on it (a
  // dead server's); any other existing file is refused (FailedPrecondition naming it).
  std::string socket_path;
  // What the cache's source emulates per call (Storage::emulated_cost of the source), told to
  // clients in HelloReply so their own reads of the source cost the same.
  EmulatedCost source_cost;
  // The clairvoyant order of the opens of the clients that send no kFuture (one more list in the
  // merge, as if from a client of its own); empty: none.
  std::vector<std::string> default_future;
  // Where log lines go (a connection closed on a malformed message); null: stderr.
  std::function<void(const std::string&)> log;
};

// Serves `cache` (which must outlive it) to any number of concurrent clients, a thread per
// connection; the cache's own threads make the copies. A malformed message closes its connection
// only (with a log line). Safe for concurrent use.
class CacheServer {
 public:
  // Binds and listens on options.socket_path (a temporary name renamed onto it, so a client never
  // finds a socket nobody listens on) and starts accepting. Errors name the path.
  static Result<std::unique_ptr<CacheServer>> Start(TieredCache* cache, CacheServerOptions options);
  // Stops accepting, closes every connection (clients then get an error naming the socket), joins
  // the threads and removes the socket.
  virtual ~CacheServer() = default;
  virtual const std::string& socket_path() const = 0;
  // Clients connected since the start (tests).
  virtual uint64_t clients_seen() const = 0;
};

// `stats` as a JSON object: {"tiers": [levels...], "source": level}, each level with the fields
// of CacheTierStats under the same names ("level" for name).
std::string CacheStatsJson(const CacheStats& stats);
// CacheStatsJson's text back (fields missing: 0); Corruption when it is not such an object.
Result<CacheStats> ParseCacheStatsJson(const std::string& text);
// `levels` as a JSON array of such level objects (the run report's per-epoch cache sections).
std::string CacheLevelsJson(const std::vector<CacheTierStats>& levels);

// The part of a client's kFuture list still ahead: paths[from...].
struct FutureListView {
  const std::vector<std::string>* paths = nullptr;
  size_t from = 0;
};
// The remaining parts of the clients' kFuture lists merged by position: the i-th remaining open
// of every list (in list order) after the (i-1)-th of all of them. Exposed for tests.
std::vector<std::string> MergeFutureLists(const std::vector<FutureListView>& lists);

}  // namespace dlio
