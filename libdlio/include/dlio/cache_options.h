// The tiered storage's own options (storage.tiered_source, storage.tiers, storage.cache_policy,
// storage.cache_scope; docs/caching.md), declared as config keys by cache/tiered_keys.cc and
// parsed straight into TieredOptions, which the config holds in StorageConfig::backends and the
// tiered storage's factory reads from StorageOptions::backends. Header-only (types and their
// config spellings), so the config module parses them without linking the cache.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dlio/config_enums.h"

namespace dlio {

// One level of a tiered storage's cache (storage.tiers), fastest first; see dlio/cache.h.
struct CacheTierOptions {
  using Type = CacheTierType;  // memory or directory (config_enums.h)
  Type type = Type::kMemory;
  std::string path;             // kDirectory: the folder holding the copies (created if missing)
  uint64_t capacity_bytes = 0;  // never exceeded, counting copies in progress; required, > 0
  uint64_t threads = 1;         // background copy threads of this tier, 1 to 64
};

// How files get into the tiers and which leave when one is full (storage.cache_policy).
enum class CachePolicyKind {
  kMonarch,      // copy on first read in the background, serve the source meanwhile; no eviction
  kLru,          // copy on first read (by the reader, before serving it); evict least recently used
  kClairvoyant,  // prefetch the next files of SetFutureAccesses; evict the farthest next use
  // clairvoyant's static mode (NoPFS): the files of SetFutureAccesses ranked by how often they
  // are used, copied in that order until the tiers are full; no eviction
  kClairvoyantStatic,
};

// Who shares one cache (storage.cache_scope): the ranks of a node (served to them by the node's
// first rank) or each process its own.
enum class CacheScope { kNode, kProcess };

template <>
struct EnumNames<CachePolicyKind> {
  static constexpr std::array<std::string_view, 4> kNames{"monarch", "lru", "clairvoyant",
                                                          "clairvoyant_static"};
};
template <>
struct EnumNames<CacheScope> {
  static constexpr std::array<std::string_view, 2> kNames{"node", "process"};
};

struct TieredOptions {
  std::string source = "posix";         // storage.tiered_source: the storage whose files it caches
  std::vector<CacheTierOptions> tiers;  // storage.tiers: the cache levels, fastest first
  CachePolicyKind policy = CachePolicyKind::kLru;  // storage.cache_policy
  CacheScope scope = CacheScope::kNode;            // storage.cache_scope
};

}  // namespace dlio
