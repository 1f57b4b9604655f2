// The policies of TieredCache on small access sequences whose outcome is worked out by hand.
#include <catch2/catch.hpp>
#include <map>

#include "cache_test_util.h"

namespace dlio {
namespace {

using testing::CacheFixture;
using testing::ContentOf;
using testing::MemoryTier;
using testing::ReadAll;

// Files A..E of 100 bytes each in the fixture's folder; name -> path.
std::map<char, std::string> FiveFiles(CacheFixture* f) {
  std::map<char, std::string> paths;
  for (char c : std::string("ABCDE")) paths[c] = f->Put(std::string(1, c), 100);
  return paths;
}

std::vector<std::string> Paths(const std::map<char, std::string>& paths, const std::string& seq) {
  std::vector<std::string> out;
  for (char c : seq) out.push_back(paths.at(c));
  return out;
}

// Reads the sequence through the cache, each read after the copies the last one started.
void Replay(const CacheFixture::Cached& cache, const std::map<char, std::string>& paths,
            const std::string& seq) {
  for (char c : seq) {
    cache->WaitIdle();
    CHECK(ReadAll(cache.get(), paths.at(c)) == ContentOf(std::string(1, c), 100));
  }
  cache->WaitIdle();
}

TEST_CASE("clairvoyant: Belady's evictions of a known sequence, every open a hit") {
  CacheFixture f;
  const auto paths = FiveFiles(&f);
  std::vector<std::string> evicted;
  auto cache = f.Make({MemoryTier(300)}, CachePolicyKind::kClairvoyant, &evicted);
  // Three slots. After each open the cache holds the next three distinct files of the sequence,
  // evicting the one used farthest ahead (never again counts as farthest):
  //   start: prefetch A B C
  //   open A (next A at 4): need D(3) -> evict A;  open B (next 5): need A(4) -> evict B
  //   open C (next 9): need B(5) -> evict C;       open D (next 10): need E(6) -> evict D
  //   open A (next 7), open B (next 8): C(9) is farther than all held -> nothing
  //   open E (next 11): need C(9) -> evict E;      open A (never): need D(10) -> evict A
  //   open B (never): need E(11) -> evict B;       open C, D, E: nothing left to place
  const std::string seq = "ABCDABEABCDE";
  cache->SetFutureAccesses(Paths(paths, seq));
  Replay(cache, paths, seq);
  CHECK(evicted == Paths(paths, "ABCDEAB"));
  const CacheStats stats = cache->Stats();
  CHECK(stats.tiers[0].hits == 12);
  CHECK(stats.tiers[0].misses == 0);
  CHECK(stats.source.hits == 0);
  CHECK(stats.tiers[0].evictions == 7);
  CHECK(stats.tiers[0].files_copied == 10);  // 3 at the start + one per eviction
  CHECK(stats.tiers[0].peak_bytes == 300);
}

TEST_CASE("clairvoyant: a file the sequence never names is served by the source, not placed") {
  CacheFixture f;
  const auto paths = FiveFiles(&f);
  auto cache = f.Make({MemoryTier(300)}, CachePolicyKind::kClairvoyant);
  cache->SetFutureAccesses(Paths(paths, "AB"));
  Replay(cache, paths, "ABE");
  const CacheStats stats = cache->Stats();
  CHECK(stats.tiers[0].hits == 2);
  CHECK(stats.source.hits == 1);
  CHECK(stats.tiers[0].files_copied == 2);
}

TEST_CASE("clairvoyant: an open whose prefetch is queued or in progress reads that copy") {
  CacheFixture f;
  const auto paths = FiveFiles(&f);
  // One copy thread and 20 ms per source call: the reader catches up with the prefetches.
  auto cache = f.Make({MemoryTier(500, 1)}, CachePolicyKind::kClairvoyant, nullptr, 4 << 20, 20000);
  const std::string seq = "ABCDE";
  cache->SetFutureAccesses(Paths(paths, seq));
  for (char c : seq) CHECK(ReadAll(cache.get(), paths.at(c)) == ContentOf(std::string(1, c), 100));
  const CacheStats stats = cache->Stats();
  CHECK(stats.source.bytes_served == 0);  // never the source's small reads
  CHECK(stats.tiers[0].hits + stats.tiers[0].read_through == 5);
  CHECK(stats.tiers[0].files_copied == 5);  // each file copied once
}

TEST_CASE("lru: places on first read and evicts the least recently used") {
  CacheFixture f;
  const auto paths = FiveFiles(&f);
  std::vector<std::string> evicted;
  auto cache = f.Make({MemoryTier(300)}, CachePolicyKind::kLru, &evicted);
  // A B C fill the three slots; A hits (order B C A); D evicts B; B evicts C; E evicts A;
  // A evicts D.
  Replay(cache, paths, "ABCADBEA");
  CHECK(evicted == Paths(paths, "BCAD"));
  const CacheStats stats = cache->Stats();
  CHECK(stats.tiers[0].hits == 1);
  CHECK(stats.tiers[0].misses == 7);
  CHECK(stats.tiers[0].read_through == 7);
  CHECK(stats.source.hits == 7);
  // The reader of a miss reads the fresh copy, not the source.
  CHECK(stats.source.bytes_served == 0);
  CHECK(stats.tiers[0].bytes_served == 800);
  CHECK(stats.tiers[0].occupancy_files == 3);
}

TEST_CASE("monarch: copies in the background, serves the source meanwhile, stops when full") {
  CacheFixture f;
  const auto paths = FiveFiles(&f);
  std::vector<std::string> evicted;
  auto cache = f.Make({MemoryTier(300)}, CachePolicyKind::kMonarch, &evicted);
  Replay(cache, paths, "ABCDE");
  CacheStats epoch1 = cache->TakeStats();
  CHECK(epoch1.source.hits == 5);
  CHECK(epoch1.source.bytes_served == 500);  // every first read came from the source
  CHECK(epoch1.tiers[0].read_through == 0);
  CHECK(epoch1.tiers[0].files_copied == 3);  // A B C; D and E found the tier full
  Replay(cache, paths, "EDCBA");
  const CacheStats epoch2 = cache->TakeStats();
  CHECK(epoch2.tiers[0].hits == 3);
  CHECK(epoch2.source.hits == 2);
  CHECK(epoch2.tiers[0].files_copied == 0);  // placement stopped for good
  CHECK(epoch2.tiers[0].occupancy_files == 3);
  CHECK(evicted.empty());
}

TEST_CASE("policies: a file larger than a tier is skipped there and does not stop smaller ones") {
  for (CachePolicyKind kind :
       {CachePolicyKind::kMonarch, CachePolicyKind::kLru, CachePolicyKind::kClairvoyant}) {
    CAPTURE(CachePolicyName(kind));
    CacheFixture f;
    const std::string big = f.Put("big", 500);
    const std::string a = f.Put("A", 100), b = f.Put("B", 100);
    auto cache = f.Make({MemoryTier(250)}, kind);
    cache->SetFutureAccesses({big, a, b, big, a, b});
    for (int round = 0; round < 2; ++round) {
      for (const std::string& path : {big, a, b}) {
        cache->WaitIdle();
        (void)ReadAll(cache.get(), path);
      }
    }
    cache->WaitIdle();
    const CacheStats stats = cache->Stats();
    CHECK(stats.tiers[0].files_copied == 2);
    CHECK(stats.tiers[0].skipped_too_big >= 1);
    CHECK(stats.tiers[0].occupancy_bytes == 200);
    CHECK(stats.tiers[0].hits >= 2);  // A and B in the second round at least
    CHECK(stats.tiers[0].peak_bytes <= 250);
  }
}

TEST_CASE("policies: a file too big for the first tier goes to the next") {
  CacheFixture f;
  const std::string big = f.Put("big", 500);
  auto cache = f.Make({MemoryTier(250), MemoryTier(1000)}, CachePolicyKind::kLru);
  (void)ReadAll(cache.get(), big);
  CHECK(ReadAll(cache.get(), big) == ContentOf("big", 500));
  const CacheStats stats = cache->Stats();
  CHECK(stats.tiers[0].skipped_too_big >= 1);
  CHECK(stats.tiers[1].hits == 1);
  CHECK(stats.tiers[0].misses == 2);
}

TEST_CASE("ParseCachePolicy names the key for an unknown policy") {
  CHECK(*ParseCachePolicy("clairvoyant") == CachePolicyKind::kClairvoyant);
  auto bad = ParseCachePolicy("fifo");
  REQUIRE(!bad.ok());
  CHECK(bad.status().message().find("storage.cache_policy") != std::string::npos);
}

}  // namespace
}  // namespace dlio
