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
#include "dlio/storage.h"

namespace dlio::cache_internal {

// The node's shared cache, held by every rank of it (the server only by the first). Not
// thread-safe: the training loop's thread.
class NodeCache final : public NodeShare {
 public:
  explicit NodeCache(std::unique_ptr<Comm> node) : node_(std::move(node)) {}
  // Leader: stops the server, frees the cache and removes the socket and its directory.
  ~NodeCache() override;

  // Starts the leader's cache and server (`options` the tiered storage's), serving the files
  // beneath `data_dirs` only; the socket's path.
  Result<std::string> StartServer(const StorageOptions& options,
                                  const std::vector<std::string>& data_dirs,
                                  const StorageRegistry& storages, const Clock* clock);
  // After the run: waits for every rank of the node (a barrier of the node) so the server
  // outlives their last read, then stops it (leader). Collective over the node.
  Status Finish() override;
  Comm* node() const { return node_.get(); }

 private:
  void Stop();

  std::unique_ptr<Comm> node_;
  std::string dir_;  // the private directory of the socket (leader)
  std::unique_ptr<Storage> source_;
  std::unique_ptr<TieredCache> cache_;
  std::unique_ptr<CacheServer> server_;
};

// The tiered storage's NodeSharedStorageFn (dlio/storage.h; RegisterTieredStorage registers it):
// with storage.cache_scope node, on a node of several ranks of a Comm that knows nodes (MPI), a
// client of the node's shared cache, which `*share` keeps (call its Finish after the run; null
// when the rank is alone on its node: its own cache is the node's); else MakeStorage's.
Result<std::unique_ptr<Storage>> MakeNodeSharedTiered(const StorageOptions& options,
                                                      const NodeShareEnv& env,
                                                      std::unique_ptr<NodeShare>* share);

}  // namespace dlio::cache_internal
