// storage.cache_scope node (docs/caching.md): the ranks of a node share one TieredCache. The
// node's first rank owns it and serves it over a Unix socket (dlio/cache_server.h) in a private
// directory it creates; every rank of the node, the first included, reads through a client of it,
// so the clairvoyant lists of all of them merge in one place and no file is copied twice a node.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "dlio/cache.h"
#include "dlio/cache_server.h"
#include "dlio/comm.h"
#include "dlio/config.h"
#include "dlio/registries.h"
#include "dlio/storage.h"

namespace dlio::runner_internal {

// The node's shared cache, held by every rank of it (the server only by the first). Not
// thread-safe: the training loop's thread.
class NodeCache {
 public:
  NodeCache(std::unique_ptr<Comm> node) : node_(std::move(node)) {}
  // Leader: stops the server, frees the cache and removes the socket and its directory.
  ~NodeCache();

  // Starts the leader's cache and server (`options` the tiered storage's), serving the files
  // beneath `data_dirs` only; the socket's path.
  Result<std::string> StartServer(const StorageOptions& options,
                                  const std::vector<std::string>& data_dirs,
                                  const Registries& registries, const Clock* clock);
  // After the run: waits for every rank of the node (a barrier of the node) so the server
  // outlives their last read, then stops it (leader). Collective over the node.
  Status Finish();
  Comm* node() const { return node_.get(); }

 private:
  void Stop();

  std::unique_ptr<Comm> node_;
  std::string dir_;  // the private directory of the socket (leader)
  std::unique_ptr<Storage> source_;
  std::unique_ptr<TieredCache> cache_;
  std::unique_ptr<CacheServer> server_;
};

// The run's storage, StorageOptionsFor(config) on `clock` and `tracer`; except that a tiered
// storage with storage.cache_scope node, on a node of several ranks of a Comm that knows nodes
// (MPI), reads through its node's shared cache, kept in `*node` (call its Finish after the run;
// null when the rank is alone on its node: its own cache is the node's). Collective over
// `comm`: every rank learns whether all of them got their storage, and fails (naming the cause
// on the rank where it happened) when one did not, so no rank waits for another forever.
Result<std::unique_ptr<Storage>> MakeRunStorage(const WorkloadConfig& config,
                                                const Registries& registries, const Clock* clock,
                                                Tracer* tracer, Comm* comm,
                                                std::unique_ptr<NodeCache>* node);

}  // namespace dlio::runner_internal
