// The tiered storage's config keys (storage.tiered_source, storage.tiers, storage.cache_policy,
// storage.cache_scope; docs/caching.md): declared here, beside the storage, and parsed straight
// into its TieredOptions (dlio/cache_options.h) in the config's StorageConfig::backends. The
// config module compiles this file into its key table (config/sources.cmake), as it parses a
// config before any registry exists.
#include "config/key_builders.h"
#include "dlio/cache_options.h"

#define TIERED_FIELD(T, member) DLIO_BACKEND_FIELD(TieredOptions, T, member)

namespace dlio::config_internal {

void AddTieredKeys(std::vector<KeySpec>* t) {
  auto add = [t](KeySpec k) { t->push_back(std::move(k)); };
  add(String("storage.tiered_source", TIERED_FIELD(std::string, source),
             "tiered: the storage whose files it caches (posix, slow, mpiio, ...)"));
  add(CacheTiers("storage.tiers", TIERED_FIELD(std::vector<CacheTierOptions>, tiers),
                 "tiered: the cache levels, fastest first, each {type: memory or directory, path "
                 "(directory: made 0700 when missing; dlio writes only in its folder `.dlio-cache` "
                 "there), capacity_bytes (e.g. 4GiB), threads (copy threads, default 1)} "
                 "(docs/caching.md)"));
  add(Enum("storage.cache_policy", DLIO_BACKEND_ENUM_FIELD(TieredOptions, CachePolicyKind, policy),
           "tiered: monarch (copy on first read, no eviction), lru (evict least recently "
           "used), clairvoyant (prefetch the sampler's coming files, evict the farthest next "
           "use), clairvoyant_static (NoPFS: place the most used coming files, no eviction)"));
  add(Enum("storage.cache_scope", DLIO_BACKEND_ENUM_FIELD(TieredOptions, CacheScope, scope),
           "tiered: node (the ranks of a node share one cache, served to them by the node's "
           "first rank: no file copied twice a node) or process (each rank its own cache) "
           "(docs/caching.md)"));
}

}  // namespace dlio::config_internal

#undef TIERED_FIELD
