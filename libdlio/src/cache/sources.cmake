# Sources of the cache module (paths relative to libdlio/).
list(APPEND DLIO_SOURCES
  src/cache/beneath.cc
  src/cache/cache_client.cc
  src/cache/cache_epoch.cc
  src/cache/cache_file.cc
  src/cache/cache_server.cc
  src/cache/cache_session.cc
  src/cache/cache_stats_json.cc
  src/cache/cache_policy.cc
  src/cache/node_cache.cc
  src/cache/remote_cache.cc
  src/cache/tier_store.cc
  src/cache/tiered_cache.cc
  src/cache/tiered_storage.cc
)
