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
  // dead server's); any other existing file is refused (FailedPrecondition naming it). Created
  // 0600 (0660 with allow_gid), whatever the umask.
  std::string socket_path;
  // The folders whose files the server hands out (absolute; at least one, else Start refuses): a
  // kOpen is served only for a regular file the kernel resolves beneath one of them (no `..`,
  // symbolic link or /proc magic link leading out); others get EACCES (ENOENT: no such file).
  // The cache's source should be confined to them too (NewConfinedCacheSource).
  std::vector<std::string> data_dirs;
  // Who may connect (SO_PEERCRED): processes of the server's own uid, and root. With allow_gid >=
  // 0 also processes whose effective or supplementary groups (SO_PEERGROUPS) include it; the
  // socket is then 0660 and of that group (the server must be a member). Others are closed at once.
  int64_t allow_gid = -1;
  // Clients served at once (a thread each); one more is refused (closed, with a log line).
  size_t max_connections = 1024;
  // What the cache's source emulates per call (Storage::emulated_cost of the source), told to
  // clients in HelloReply so their own reads of the source cost the same.
  EmulatedCost source_cost;
  // The clairvoyant order of the opens of the clients that send no kFuture (one more list in the
  // merge, as if from a client of its own); empty: none.
  std::vector<std::string> default_future;
  // Where log lines go (a connection closed on a malformed message); null: stderr.
  std::function<void(const std::string&)> log;
};

// `source` confined to `data_dirs` (absolute; InvalidArgument naming `key` otherwise) as a
// CacheServer's kOpen is: it opens for reading only regular files the kernel resolves beneath
// one of them and refuses everything else, so that neither a client's open nor a prefetch of a
// client's kFuture list makes the served cache read a file outside them.
Result<std::unique_ptr<Storage>> NewConfinedCacheSource(std::unique_ptr<Storage> source,
                                                        const std::vector<std::string>& data_dirs,
                                                        const std::string& key);

// The cache a server shares: the tiers and policy of `options` (a tiered storage's) over its
// storage.tiered_source built on `clock`, confined to `data_dirs` (NewConfinedCacheSource).
// Destroy `cache` before `source`.
struct ServedCache {
  std::unique_ptr<Storage> source;
  std::unique_ptr<TieredCache> cache;
};
class Clock;
Result<ServedCache> MakeServedCache(const StorageOptions& options, const StorageRegistry& storages,
                                    const Clock* clock, const std::vector<std::string>& data_dirs,
                                    const std::string& key);

// Serves `cache` (which must outlive it) to up to max_connections concurrent clients, a thread per
// connection; the cache's own threads make the copies. A malformed message closes its connection
// only (with a log line); no client can make the server stop serving the others (it reads what
// is sent, never what is announced; it refuses a client when out of threads or descriptors).
// Safe for concurrent use.
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
  // Connections refused since the start: a peer not allowed, too many connections, no thread or
  // descriptor left (tests).
  virtual uint64_t clients_refused() const = 0;
};

// `stats` as a JSON object: {"tiers": [levels...], "source": level}, each level with the fields
// of CacheTierStats under the same names ("level" for name).
std::string CacheStatsJson(const CacheStats& stats);
// CacheStatsJson's text back (fields missing: 0); Corruption when it is not such an object.
Result<CacheStats> ParseCacheStatsJson(const std::string& text);
// `levels` as a JSON array of such level objects (the run report's per-epoch cache sections).
std::string CacheLevelsJson(const std::vector<CacheTierStats>& levels);
// CacheLevelsJson's text back (an epoch's "cache" statistics block, EpochReport::storage_stats);
// Corruption when it is not an array of level objects.
Result<std::vector<CacheTierStats>> ParseCacheLevelsJson(const std::string& text);

// The part of a client's kFuture list still ahead: paths[from...].
struct FutureListView {
  const std::vector<std::string>* paths = nullptr;
  size_t from = 0;
};
// The remaining parts of the clients' kFuture lists merged by position: the i-th remaining open
// of every list (in list order) after the (i-1)-th of all of them. Exposed for tests.
std::vector<std::string> MergeFutureLists(const std::vector<FutureListView>& lists);

}  // namespace dlio
