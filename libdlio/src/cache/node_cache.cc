#include "cache/node_cache.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "dlio/str_cat.h"

namespace dlio::cache_internal {
namespace {

constexpr char kServing[] = "serving ";  // what the leader broadcasts before the socket's path

// A new private (0700) directory for the socket: under $TMPDIR unless that is too long for a
// socket path, else /tmp.
Result<std::string> MakePrivateDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string base = tmp != nullptr && tmp[0] == '/' && std::strlen(tmp) < 64 ? tmp : "/tmp";
  std::string dir = base + "/dlio-node-cache-XXXXXX";
  if (::mkdtemp(dir.data()) == nullptr) {
    return Status::FromErrno(errno, "creating the node cache's socket directory under " + base);
  }
  return dir;
}

// This rank's storage: a client of the node's server at `socket`.
Result<std::unique_ptr<Storage>> ClientStorage(const StorageOptions& options,
                                               const StorageRegistry& storages, const Clock* clock,
                                               Tracer* tracer, const std::string& socket,
                                               int world_rank, bool reports_stats) {
  DLIO_ASSIGN_OR_RETURN(StorageOptions source_options, TieredSourceOptions(options));
  auto source = MakeStorage(source_options, storages, clock, nullptr);
  if (!source.ok()) return source.status().WithContext("storage.tiered_source");
  DLIO_ASSIGN_OR_RETURN(auto storage,
                        NewTieredClientStorage(std::move(source).value(), socket,
                                               StrCat("rank ", world_rank), reports_stats));
  storage->Bind(clock, tracer);
  return storage;
}

// The node's shared storage: the leader starts the server and tells the node where it is.
Result<std::unique_ptr<Storage>> SharedStorage(const StorageOptions& options,
                                               const NodeShareEnv& env, NodeCache* node) {
  std::string message;
  if (node->node()->rank() == 0) {
    auto socket = node->StartServer(options, env.data_dirs, *env.storages, env.clock);
    message = socket.ok() ? kServing + *socket : socket.status().ToString();
  }
  DLIO_RETURN_NOT_OK(node->node()->Broadcast(&message, 0));
  if (message.rfind(kServing, 0) != 0) {
    return Status::FailedPrecondition(
        "storage.cache_scope node: the cache server of this node (its first rank) could not "
        "start: ",
        message);
  }
  return ClientStorage(options, *env.storages, env.clock, env.tracer,
                       message.substr(strlen(kServing)), env.comm->rank(),
                       node->node()->rank() == 0);
}

}  // namespace

NodeCache::~NodeCache() { Stop(); }

void NodeCache::Stop() {
  server_.reset();
  cache_.reset();
  source_.reset();
  if (!dir_.empty()) ::rmdir(dir_.c_str());  // empty once the server removed its socket
  dir_.clear();
}

Result<std::string> NodeCache::StartServer(const StorageOptions& options,
                                           const std::vector<std::string>& data_dirs,
                                           const StorageRegistry& storages, const Clock* clock) {
  DLIO_ASSIGN_OR_RETURN(
      ServedCache served,
      MakeServedCache(
          options, storages, clock, data_dirs,
          "storage.cache_scope node: dataset.data_folder, checkpoint.checkpoint_folder"));
  source_ = std::move(served.source);
  cache_ = std::move(served.cache);
  DLIO_ASSIGN_OR_RETURN(dir_, MakePrivateDir());
  CacheServerOptions server;
  server.socket_path = dir_ + "/cache.sock";
  server.data_dirs = data_dirs;
  server.source_cost = source_->emulated_cost();
  DLIO_ASSIGN_OR_RETURN(server_, CacheServer::Start(cache_.get(), std::move(server)));
  return server_->socket_path();
}

Status NodeCache::Finish() {
  DLIO_RETURN_NOT_OK(node_->Barrier());
  Stop();
  return Status::OK();
}

Result<std::unique_ptr<Storage>> MakeNodeSharedTiered(const StorageOptions& options,
                                                      const NodeShareEnv& env,
                                                      std::unique_ptr<NodeShare>* share) {
  const StorageRegistry& storages = *env.storages;
  DLIO_ASSIGN_OR_RETURN(const StorageCapabilities declared,
                        StorageCapabilitiesFor(options, storages));
  if (!declared.node_shared_cache ||
      options.backends.Value<TieredOptions>().scope != CacheScope::kNode) {
    return MakeStorage(options, storages, env.clock, env.tracer);
  }
  DLIO_ASSIGN_OR_RETURN(std::unique_ptr<Comm> node_comm, env.comm->SplitNode());
  if (node_comm == nullptr) return MakeStorage(options, storages, env.clock, env.tracer);
  Result<std::unique_ptr<Storage>> storage = Status::Internal("no storage made");
  if (node_comm->size() == 1) {  // the rank's own cache is the node's
    storage = MakeStorage(options, storages, env.clock, env.tracer);
  } else {
    auto node = std::make_unique<NodeCache>(std::move(node_comm));
    NodeCache* shared = node.get();
    *share = std::move(node);
    storage = SharedStorage(options, env, shared);
  }
  std::vector<double> failed{storage.ok() ? 0.0 : 1.0};
  DLIO_RETURN_NOT_OK(env.comm->AllReduceMax(&failed));
  if (!storage.ok()) return storage.status();
  if (failed[0] > 0) {
    return Status::FailedPrecondition(
        "storage.cache_scope node: another rank could not reach its node's cache (its error "
        "names the cause)");
  }
  return storage;
}

}  // namespace dlio::cache_internal
