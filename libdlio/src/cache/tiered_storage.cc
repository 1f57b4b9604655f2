// The `tiered` storage (dlio/cache.h): reads through a TieredCache over the source storage.
#include <unistd.h>

#include "cache/cache_client.h"
#include "cache/cache_epoch.h"
#include "cache/node_cache.h"
#include "dlio/cache.h"
#include "dlio/cache_server.h"
#include "dlio/config.h"
#include "dlio/storage_wrapper.h"

namespace dlio {
namespace {

// The source's capabilities, minus what would bypass the cache (mapping files, writes of shared
// files outside this storage's Files) or what it breaks: collective reads need the same calls on
// every rank, and each rank's cache serves its own hits. A file is placed and served by its open,
// so runs reopen their files each epoch.
StorageCapabilities TieredCapabilities(StorageCapabilities source, bool node_scope) {
  source.shared_by_node = node_scope;
  source.map_files = false;
  source.shared_write = false;
  source.collective_reads = false;
  source.reopen_each_epoch = true;
  source.node_shared_cache = true;
  return source;
}

// In a process forked from the one that built it (the pytorch pipeline's workers), the cache's
// copy threads do not exist and its lock may have been held at the fork: calls there go to the
// source directly.
class TieredStorage final : public StorageWrapper {
 public:
  explicit TieredStorage(std::unique_ptr<Storage> source)
      : StorageWrapper("tiered", std::move(source)), owner_(::getpid()) {}

  Status Start(CacheOptions options) {
    options.on_event = [this, user = std::move(options.on_event)](const CacheEvent& e) {
      if (user) user(e);
      Trace(e);
    };
    DLIO_ASSIGN_OR_RETURN(cache_, TieredCache::Make(std::move(options), inner()));
    return Status::OK();
  }
  // Reads through the node's cache that the server at `socket_path` serves.
  Status Connect(const std::string& socket_path, const std::string& client_name,
                 bool reports_stats) {
    DLIO_ASSIGN_OR_RETURN(cache_, cache_internal::ConnectRemoteCache(socket_path, client_name,
                                                                     inner(), reports_stats));
    return Status::OK();
  }
  StorageCapabilities capabilities() const override {
    return TieredCapabilities(inner()->capabilities(), scope_ == CacheScope::kNode);
  }
  TieredCache* cache() const { return cache_.get(); }
  // The scope the "cache" statistics block's summary names (storage.cache_scope).
  void set_scope(CacheScope scope) { scope_ = scope; }
  // This epoch's and the coming ones' files: the clairvoyant cache prefetches across epochs.
  Status OnEpochPlan(const EpochPlan& plan) override {
    if (Forked()) return StorageWrapper::OnEpochPlan(plan);
    DLIO_RETURN_NOT_OK(cache_internal::FeedCacheFuture(cache_.get(), plan));
    return StorageWrapper::OnEpochPlan(plan);
  }
  void TakeEpochStats(EpochStatsSink* sink) override {
    if (!Forked()) {
      const std::vector<CacheTierStats> levels = cache_internal::TakeEpochCacheStats(cache_.get());
      if (sink != nullptr && !levels.empty()) {
        sink->blocks.push_back(cache_internal::CacheStatsBlock(
            levels, CachePolicyName(cache_->policy()), std::string(EnumName(scope_))));
        cache_internal::TraceEpochCacheStats(sink->tracer, static_cast<int64_t>(sink->epoch),
                                             sink->end_us, levels);
      }
    }
    StorageWrapper::TakeEpochStats(sink);
  }
  // Never collective (see TieredCapabilities).
  const void* CollectiveMpiComm(const std::string&) const override { return nullptr; }

 protected:
  Result<std::unique_ptr<File>> DoOpen(const std::string& path, OpenMode mode,
                                       const FileOptions& options) override {
    if (!Forked() && mode == OpenMode::kRead) return cache_->Open(path, options);
    Invalidate(path);
    return StorageWrapper::DoOpen(path, mode, options);
  }
  Status DoRename(const std::string& from, const std::string& to) override {
    Invalidate(from);
    Invalidate(to);
    return StorageWrapper::DoRename(from, to);
  }
  Status DoRemove(const std::string& path) override {
    Invalidate(path);
    return StorageWrapper::DoRemove(path);
  }

 private:
  bool Forked() const { return ::getpid() != owner_; }
  // Records `e` in category "cache" (offset: the tier, -1 for the source; count: the bytes).
  void Trace(const CacheEvent& e) {
    if (!tracing()) return;
    const int64_t end_us = clock()->WallMicros();
    RecordExternalIo(IoKind::kOther, "cache", e.name, *e.path, e.tier,
                     static_cast<int64_t>(e.bytes), end_us - e.dur_ns / 1000, e.dur_ns);
  }
  void Invalidate(const std::string& path) {
    if (!Forked()) cache_->Invalidate(path);
  }

  const pid_t owner_;
  std::unique_ptr<TieredCache> cache_;  // destroyed before the source it reads
  CacheScope scope_ = CacheScope::kProcess;
};

// A tiered storage over `source` with its own cache; `scope` as storage.cache_scope names it.
Result<std::unique_ptr<Storage>> StartTiered(std::unique_ptr<Storage> source, CacheOptions options,
                                             CacheScope scope) {
  if (source == nullptr) return Status::InvalidArgument("tiered storage: the source is null");
  auto storage = std::make_unique<TieredStorage>(std::move(source));
  DLIO_RETURN_NOT_OK(storage->Start(std::move(options)));
  storage->set_scope(scope);
  return std::unique_ptr<Storage>(std::move(storage));
}

// The source's options: the same, named storage.tiered_source.
Result<StorageOptions> SourceOptions(const StorageOptions& options) {
  const std::string source_name = options.backends.Value<TieredOptions>().source;
  if (source_name.empty() || source_name == "tiered") {
    return Status::InvalidArgument("storage.tiered_source must name another storage, got '",
                                   source_name, "'");
  }
  StorageOptions source = options;
  source.name = source_name;
  return source;
}

// The cache of a tiered storage of `options`: its tiers and policy.
CacheOptions CacheOptionsOf(const StorageOptions& options) {
  const TieredOptions tiered = options.backends.Value<TieredOptions>();
  CacheOptions cache;
  cache.tiers = tiered.tiers;
  cache.policy = tiered.policy;
  return cache;
}

StorageCapabilities TieredDeclares(const StorageOptions& options, const StorageRegistry& storages) {
  auto source = SourceOptions(options);
  if (!source.ok()) return {};
  auto capabilities = StorageCapabilitiesFor(*source, storages);
  const bool node_scope = options.backends.Value<TieredOptions>().scope == CacheScope::kNode;
  return capabilities.ok() ? TieredCapabilities(*capabilities, node_scope) : StorageCapabilities{};
}

Status ValidateTiered(const WorkloadConfig& c) {
  const std::string source = c.storage.backends.Value<TieredOptions>().source;
  if (source.empty() || source == "tiered") {
    return Status::InvalidArgument(
        "storage.tiered_source must name another storage when storage.storage_type is "
        "'tiered', got '" +
        source + "'");
  }
  return Status::OK();
}

Result<std::unique_ptr<Storage>> MakeTiered(const StorageOptions& options,
                                            const StorageBuildEnv& env) {
  DLIO_ASSIGN_OR_RETURN(StorageOptions source_options, SourceOptions(options));
  // A null tracer inside: only the outer layer records events.
  auto source = MakeStorage(source_options, env.storages, env.clock, nullptr);
  if (!source.ok()) return source.status().WithContext("storage.tiered_source");
  return StartTiered(std::move(source).value(), CacheOptionsOf(options),
                     options.backends.Value<TieredOptions>().scope);
}

}  // namespace

Result<std::unique_ptr<Storage>> NewTieredStorage(std::unique_ptr<Storage> source,
                                                  CacheOptions options) {
  return StartTiered(std::move(source), std::move(options), CacheScope::kProcess);
}

Result<std::unique_ptr<Storage>> NewTieredClientStorage(std::unique_ptr<Storage> source,
                                                        const std::string& socket_path,
                                                        const std::string& client_name,
                                                        bool reports_stats) {
  if (source == nullptr) return Status::InvalidArgument("tiered storage: the source is null");
  auto storage = std::make_unique<TieredStorage>(std::move(source));
  DLIO_RETURN_NOT_OK(storage->Connect(socket_path, client_name, reports_stats));
  storage->set_scope(CacheScope::kNode);
  return std::unique_ptr<Storage>(std::move(storage));
}

Result<ServedCache> MakeServedCache(const StorageOptions& options, const StorageRegistry& storages,
                                    const Clock* clock, const std::vector<std::string>& data_dirs,
                                    const std::string& key) {
  DLIO_ASSIGN_OR_RETURN(StorageOptions source_options, SourceOptions(options));
  CacheOptions cache = CacheOptionsOf(options);
  auto source = MakeStorage(source_options, storages, clock, nullptr);
  if (!source.ok()) return source.status().WithContext("storage.tiered_source");
  ServedCache served;
  DLIO_ASSIGN_OR_RETURN(served.source,
                        NewConfinedCacheSource(std::move(source).value(), data_dirs, key));
  DLIO_ASSIGN_OR_RETURN(served.cache, TieredCache::Make(std::move(cache), served.source.get()));
  return served;
}

Result<StorageOptions> TieredSourceOptions(const StorageOptions& options) {
  return SourceOptions(options);
}

TieredCache* CacheOf(Storage* storage) {
  while (storage != nullptr) {
    if (auto* tiered = dynamic_cast<TieredStorage*>(storage)) return tiered->cache();
    auto* wrapper = dynamic_cast<StorageWrapper*>(storage);
    storage = wrapper != nullptr ? wrapper->inner() : nullptr;
  }
  return nullptr;
}

Status RegisterTieredStorage(StorageRegistry* storages, NodeSharedStorageRegistry* node_shared) {
  DLIO_RETURN_NOT_OK(storages->Register(
      {"tiered",
       "caches whole files of another storage in faster tiers (memory, a directory)",
       "storage.tiered_source, storage.tiers, storage.cache_policy (docs/caching.md)",
       &MakeTiered,
       &TieredDeclares,
       &ValidateTiered,
       // its own keys (cache/tiered_keys.cc), parsed into its TieredOptions
       {"storage.tiered_source", "storage.tiers", "storage.cache_"}}));
  // storage.cache_scope node: one cache a node, served by the node's first rank.
  return node_shared->Register(
      {"tiered", "one cache a node, served to its ranks by the node's first rank",
       "storage.cache_scope (docs/caching.md)", &cache_internal::MakeNodeSharedTiered});
}

}  // namespace dlio
