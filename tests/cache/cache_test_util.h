// A source folder of small files and a cache over it, for the cache tests.
#pragma once

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dlio/cache.h"
#include "dlio/storage.h"
#include "storage/slow_options.h"
#include "storage/slow_storage.h"
#include "test_util.h"

namespace dlio::testing {

// Deterministic bytes of a file named `name`, `size` long.
inline std::string ContentOf(const std::string& name, size_t size, int version = 0) {
  std::string out(size, '\0');
  uint64_t x = 1469598103934665603ULL + static_cast<uint64_t>(version) * 7919;
  for (char c : name) x = (x ^ static_cast<uint8_t>(c)) * 1099511628211ULL;
  for (size_t i = 0; i < size; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    out[i] = static_cast<char>(x);
  }
  return out;
}

inline CacheTierOptions MemoryTier(uint64_t capacity, int threads = 1) {
  CacheTierOptions t;
  t.type = CacheTierOptions::Type::kMemory;
  t.capacity_bytes = capacity;
  t.threads = threads;
  return t;
}

inline CacheTierOptions DirectoryTier(const std::string& path, uint64_t capacity, int threads = 1) {
  CacheTierOptions t;
  t.type = CacheTierOptions::Type::kDirectory;
  t.path = path;
  t.capacity_bytes = capacity;
  t.threads = threads;
  return t;
}

// A temp dir with a posix source storage.
struct CacheFixture {
  TempDir dir;
  std::unique_ptr<Storage> source = NewPosixStorage(StorageOptions());

  // Writes `name` (size bytes, version's content) in the source folder; returns its path.
  std::string Put(const std::string& name, size_t size, int version = 0) {
    const std::string path = dir / name;
    WriteTextFile(path, ContentOf(name, size, version));
    return path;
  }

  // A tiered storage over a posix source (slow, with that latency per call, when
  // source_latency_us > 0), and its cache.
  struct Cached {
    std::unique_ptr<Storage> storage;
    TieredCache* cache = nullptr;
    Storage* get() const { return storage.get(); }
    TieredCache* operator->() const { return cache; }
  };
  Cached Make(std::vector<CacheTierOptions> tiers, CachePolicyKind policy,
              std::vector<std::string>* evicted = nullptr, size_t chunk = 4 << 20,
              double source_latency_us = 0) {
    CacheOptions o;
    o.tiers = std::move(tiers);
    o.policy = policy;
    o.copy_chunk_bytes = chunk;
    if (evicted != nullptr) {
      o.on_evict = [evicted](int, const std::string& path) { evicted->push_back(path); };
    }
    std::unique_ptr<Storage> source = NewPosixStorage(StorageOptions());
    if (source_latency_us > 0) {
      StorageOptions slow;
      slow.backends.Get<SlowOptions>().latency_us = source_latency_us;
      source = NewSlowStorage(std::move(source), slow);
    }
    auto storage = NewTieredStorage(std::move(source), std::move(o));
    REQUIRE(storage.ok());
    Cached out;
    out.storage = std::move(storage).value();
    out.cache = CacheOf(out.storage.get());
    REQUIRE(out.cache != nullptr);
    return out;
  }
};

// The bytes of `fd` [0, size) (pread).
inline std::string PreadWhole(int fd, uint64_t size) {
  std::string out(size, '\0');
  uint64_t off = 0;
  while (off < size) {
    const ssize_t r = ::pread(fd, out.data() + off, size - off, static_cast<off_t>(off));
    if (r <= 0) return "(short read)";
    off += static_cast<uint64_t>(r);
  }
  return out;
}

// The whole content of `path` read through `storage` (in reads of `step` bytes).
inline std::string ReadAll(Storage* storage, const std::string& path, size_t step = 1 << 20) {
  auto file = storage->Open(path, OpenMode::kRead);
  REQUIRE(file.ok());
  auto size = (*file)->Size();
  REQUIRE(size.ok());
  std::string out(*size, '\0');
  uint64_t offset = 0;
  while (offset < *size) {
    const size_t want = std::min<uint64_t>(step, *size - offset);
    auto got = (*file)->ReadAt(offset, want, out.data() + offset);
    REQUIRE(got.ok());
    REQUIRE(*got == want);
    offset += *got;
  }
  return out;
}

}  // namespace dlio::testing
