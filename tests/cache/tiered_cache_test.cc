// TieredCache's guarantees: identical bytes from every tier, no stale copy, capacity under many
// readers, and nothing trusted or lost after a crash.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <random>
#include <thread>

#include "cache_test_util.h"
#include "storage/slow_options.h"
#include "storage/slow_storage.h"

namespace dlio {
namespace {

using testing::CacheFixture;
using testing::ContentOf;
using testing::DirectoryTier;
using testing::MemoryTier;
using testing::ReadAll;
using testing::TempDir;

std::vector<std::string> NamesIn(const std::string& dir) {
  std::vector<std::string> names;
  if (!std::filesystem::exists(dir)) return names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

bool AnyContains(const std::vector<std::string>& names, const std::string& part) {
  return std::any_of(names.begin(), names.end(),
                     [&](const std::string& n) { return n.find(part) != std::string::npos; });
}

TEST_CASE("tiered cache: every tier serves the source's bytes exactly") {
  CacheFixture f;
  TempDir tier_dir;
  const std::vector<size_t> sizes = {0, 1, 4095, 4096, 4097, 100000, (1 << 20) + 3};
  std::vector<std::string> paths;
  for (size_t i = 0; i < sizes.size(); ++i) paths.push_back(f.Put(StrCat("f", i), sizes[i]));
  for (int which = 0; which < 2; ++which) {
    auto tier = which == 0 ? MemoryTier(8 << 20) : DirectoryTier(tier_dir.path(), 8 << 20);
    CAPTURE(which);
    auto cache = f.Make({tier}, CachePolicyKind::kMonarch, nullptr, /*chunk=*/4096);
    for (int round = 0; round < 2; ++round) {
      for (size_t i = 0; i < paths.size(); ++i) {
        CHECK(ReadAll(cache.get(), paths[i], 3000) == ContentOf(StrCat("f", i), sizes[i]));
      }
      cache->WaitIdle();
    }
    const CacheStats stats = cache->Stats();
    CHECK(stats.tiers[0].hits == paths.size());  // the whole second round
    CHECK(stats.tiers[0].files_copied == paths.size());
    size_t total = 0;
    for (size_t s : sizes) total += s;
    CHECK(stats.tiers[0].bytes_served == total);
    CHECK(stats.tiers[0].bytes_copied == total);
  }
}

TEST_CASE("tiered cache: a source whose size or mtime changed is served, not the stale copy") {
  CacheFixture f;
  TempDir tier_dir;
  for (int which = 0; which < 2; ++which) {
    CAPTURE(which);
    const std::string path = f.Put("a", 1000);
    auto tier = which == 0 ? MemoryTier(1 << 20) : DirectoryTier(tier_dir.path(), 1 << 20);
    auto cache = f.Make({tier}, CachePolicyKind::kLru);
    CHECK(ReadAll(cache.get(), path) == ContentOf("a", 1000));
    CHECK(ReadAll(cache.get(), path) == ContentOf("a", 1000));
    CHECK(cache->Stats().tiers[0].hits == 1);

    // Same size, new bytes and a new mtime.
    f.Put("a", 1000, /*version=*/1);
    struct timespec times[2] = {{0, UTIME_OMIT}, {12345, 678}};
    REQUIRE(utimensat(AT_FDCWD, path.c_str(), times, 0) == 0);
    CHECK(ReadAll(cache.get(), path) == ContentOf("a", 1000, 1));
    CHECK(cache->Stats().tiers[0].invalidations == 1);
    CHECK(ReadAll(cache.get(), path) == ContentOf("a", 1000, 1));  // the new copy

    // Another size.
    f.Put("a", 1500, /*version=*/2);
    CHECK(ReadAll(cache.get(), path) == ContentOf("a", 1500, 2));
    CHECK(cache->Stats().tiers[0].invalidations == 2);
    // Invalidate drops the copy outright.
    cache->Invalidate(path);
    CHECK(cache->Stats().tiers[0].occupancy_files == 0);
    CHECK(cache->Stats().tiers[0].occupancy_bytes == 0);
  }
}

TEST_CASE("lru: a file that changed and grew evicts others to be placed again") {
  CacheFixture f;
  const std::string a = f.Put("a", 100), b = f.Put("b", 100);
  auto cache = f.Make({MemoryTier(200)}, CachePolicyKind::kLru);
  (void)ReadAll(cache.get(), a);
  (void)ReadAll(cache.get(), b);  // the tier is full
  f.Put("a", 150, /*version=*/1);
  CHECK(ReadAll(cache.get(), a) == ContentOf("a", 150, 1));  // stale: dropped, b evicted
  CHECK(ReadAll(cache.get(), a) == ContentOf("a", 150, 1));
  const CacheStats stats = cache->Stats();
  CHECK(stats.tiers[0].invalidations == 1);
  CHECK(stats.tiers[0].evictions == 1);
  CHECK(stats.tiers[0].hits == 1);
  CHECK(stats.tiers[0].occupancy_bytes == 150);
}

TEST_CASE("tiered cache: capacity is never exceeded under many concurrent readers") {
  CacheFixture f;
  TempDir tier_dir;
  std::vector<std::string> paths;
  std::vector<size_t> sizes;
  std::mt19937 rng(7);
  for (int i = 0; i < 40; ++i) {
    sizes.push_back(1000 + rng() % 30000);
    paths.push_back(f.Put(StrCat("f", i), sizes.back()));
  }
  for (CachePolicyKind kind :
       {CachePolicyKind::kMonarch, CachePolicyKind::kLru, CachePolicyKind::kClairvoyant}) {
    CAPTURE(CachePolicyName(kind));
    auto cache = f.Make({MemoryTier(100000, 2), DirectoryTier(tier_dir.path(), 150000, 2)}, kind,
                        nullptr, 8192);
    std::vector<std::string> future;
    std::vector<size_t> order;
    for (int r = 0; r < 400; ++r) order.push_back(rng() % paths.size());
    for (size_t i : order) future.push_back(paths[i]);
    cache->SetFutureAccesses(future);
    std::atomic<size_t> next{0};
    std::atomic<int> wrong{0};
    std::atomic<bool> over{false};
    // Two halves, the copies of the first finished before the second starts (so that the second
    // has hits however the copy threads were scheduled).
    auto read_until = [&](size_t end) {
      std::vector<std::thread> readers;
      for (int t = 0; t < 8; ++t) {
        readers.emplace_back([&] {
          for (size_t k; (k = next.fetch_add(1)) < end;) {
            const size_t i = order[k];
            auto file = cache.get()->Open(paths[i], OpenMode::kRead);
            if (!file.ok()) {
              ++wrong;
              continue;
            }
            std::string data(sizes[i], '\0');
            auto got = (*file)->ReadAt(0, data.size(), data.data());
            if (!got.ok() || *got != sizes[i] || data != ContentOf(StrCat("f", i), sizes[i]))
              ++wrong;
            const CacheStats s = cache->Stats();
            for (const auto& tier : s.tiers)
              over = over || tier.occupancy_bytes > tier.capacity_bytes;
          }
        });
      }
      for (auto& r : readers) r.join();
      next = end;
      cache->WaitIdle();
    };
    read_until(order.size() / 2);
    const CacheStats first = cache->TakeStats();
    read_until(order.size());
    CHECK(wrong == 0);
    CHECK(!over);
    const CacheStats stats = cache->Stats();
    CHECK(first.source.hits + first.tiers[0].hits + first.tiers[1].hits == order.size() / 2);
    CHECK(stats.tiers[0].peak_bytes <= 100000);
    CHECK(stats.tiers[1].peak_bytes <= 150000);
    CHECK(stats.tiers[0].hits + stats.tiers[1].hits > 0);
    uint64_t held = 0;
    const std::string own = tier_dir / kCacheDirName;
    for (const auto& name : NamesIn(own)) {
      if (name.find(kCacheCopySuffix) != std::string::npos) {
        held += std::filesystem::file_size(own + "/" + name);
      }
    }
    CHECK(held == stats.tiers[1].occupancy_bytes);  // the folder holds what is accounted
  }
}

TEST_CASE("tiered cache: leftovers of a dead cache are removed, never trusted, others kept") {
  CacheFixture f;
  TempDir tier_dir;
  const std::string path = f.Put("a", 5000);
  // dlio's folder as a killed cache left it: a complete-looking copy and a temporary.
  const std::string own = tier_dir / kCacheDirName;
  REQUIRE(std::filesystem::create_directory(own));
  testing::WriteTextFile(own + "/" + kCacheMarkerName, "");
  testing::WriteTextFile(own + "/0123456789abcdef-0-a" + kCacheCopySuffix, std::string(5000, 'x'));
  testing::WriteTextFile(own + "/old" + kCacheCopySuffix + kCacheTmpInfix + "h_1_2_3_0", "half");
  // Files dlio did not make, beside it.
  testing::WriteTextFile(tier_dir / "user.dat", "keep me");
  testing::WriteTextFile(tier_dir / "a.dlio-cached", "a user's, named like a copy");
  {
    auto cache = f.Make({DirectoryTier(tier_dir.path(), 1 << 20)}, CachePolicyKind::kLru);
    const auto names = NamesIn(own);
    CHECK(!AnyContains(names, kCacheTmpInfix));
    CHECK(!AnyContains(names, "0123456789abcdef"));
    CHECK(ReadAll(cache.get(), path) == ContentOf("a", 5000));
    CHECK(ReadAll(cache.get(), path) == ContentOf("a", 5000));
    CHECK(cache->Stats().tiers[0].hits == 1);

    // One cache per folder at a time.
    CacheOptions o;
    o.tiers = {DirectoryTier(tier_dir.path(), 1 << 20)};
    auto second = TieredCache::Make(o, f.source.get());
    REQUIRE(!second.ok());
    CHECK(second.status().message().find("storage.tiers[0].path") != std::string::npos);
  }
  // The cache removed its copies, its lock and its folder, nothing else.
  CHECK(NamesIn(tier_dir.path()) == std::vector<std::string>{"a.dlio-cached", "user.dat"});
}

TEST_CASE("tiered cache: a copy killed halfway is not trusted by the next run") {
  CacheFixture f;
  TempDir tier_dir;
  const std::string path = f.Put("big", 256 * 1024);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // A slow source: each 4 KiB read of the copy takes 50 ms, so the copy is caught halfway.
    StorageOptions slow;
    slow.backends.Get<SlowOptions>().latency_us = 50000;
    CacheOptions o;
    o.tiers = {DirectoryTier(tier_dir.path(), 1 << 20)};
    o.policy = CachePolicyKind::kMonarch;
    o.copy_chunk_bytes = 4096;
    auto tiered = NewTieredStorage(NewSlowStorage(NewPosixStorage(StorageOptions()), slow), o);
    if (!tiered.ok()) _exit(2);
    { auto file = (*tiered)->Open(path, OpenMode::kRead); }
    std::this_thread::sleep_for(std::chrono::seconds(60));
    _exit(3);
  }
  // Wait for the temporary copy to appear, then kill the child.
  bool saw_tmp = false;
  for (int i = 0; i < 200 && !saw_tmp; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    saw_tmp = AnyContains(NamesIn(tier_dir / kCacheDirName), kCacheTmpInfix);
  }
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  REQUIRE(saw_tmp);
  CHECK(AnyContains(NamesIn(tier_dir / kCacheDirName),
                    kCacheTmpInfix));  // the killed copy's leftover

  auto cache = f.Make({DirectoryTier(tier_dir.path(), 1 << 20)}, CachePolicyKind::kLru);
  CHECK(!AnyContains(NamesIn(tier_dir / kCacheDirName), kCacheTmpInfix));
  CHECK(ReadAll(cache.get(), path) == ContentOf("big", 256 * 1024));
  CHECK(ReadAll(cache.get(), path) == ContentOf("big", 256 * 1024));
  CHECK(cache->Stats().tiers[0].hits == 1);
}

TEST_CASE("tiered cache: bad tier options name their key") {
  CacheFixture f;
  CacheOptions o;
  o.tiers = {MemoryTier(100), MemoryTier(0)};
  auto cache = TieredCache::Make(o, f.source.get());
  REQUIRE(!cache.ok());
  CHECK(cache.status().message().find("storage.tiers[1].capacity_bytes") != std::string::npos);
  o.tiers = {testing::DirectoryTier("", 100)};
  cache = TieredCache::Make(o, f.source.get());
  REQUIRE(!cache.ok());
  CHECK(cache.status().message().find("storage.tiers[0].path") != std::string::npos);
}

}  // namespace
}  // namespace dlio
