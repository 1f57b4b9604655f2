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

TEST_CASE("clairvoyant: Belady's MIN on a known sequence, no fetch MIN does not make") {
  CacheFixture f;
  const auto paths = FiveFiles(&f);
  std::vector<std::string> evicted;
  auto cache = f.Make({MemoryTier(300)}, CachePolicyKind::kClairvoyant, &evicted);
  // Three slots; positions 0-11. MIN keeps a miss only by evicting a file used later than the
  // miss's next use (never again counts as farthest):
  //   start: prefetch A B C (free room)
  //   D at 3 (next 10): held A@4 B@5 C@9 are all used sooner -> read from the source
  //   A B hit;  E at 6 (next 11): held A@7 B@8 C@9 -> from the source;  A B C hit
  //   D, E at 10, 11 (never again): fetched once either way, so prefetched into the slots of A
  //   (after its open at 7) and B (after 8), which are never used again.
  // 7 fetches. Prefetching every upcoming file ahead of the reader made all 12 opens hits but
  // fetched 10 times (A B C D E copied, evicted and copied again).
  const std::string seq = "ABCDABEABCDE";
  cache->SetFutureAccesses(Paths(paths, seq));
  Replay(cache, paths, seq);
  CHECK(evicted == Paths(paths, "AB"));
  const CacheStats stats = cache->Stats();
  CHECK(stats.tiers[0].files_copied + stats.source.hits == 7);  // the source's fetches
  CHECK(stats.tiers[0].read_through == 0);
  CHECK(stats.tiers[0].hits == 10);
  CHECK(stats.source.hits == 2);
  CHECK(stats.tiers[0].files_copied == 5);
  CHECK(stats.tiers[0].peak_bytes == 300);
}

// Files named by the characters of `names`, 100 bytes each, in the fixture's folder.
std::map<char, std::string> Files(CacheFixture* f, const std::string& names) {
  std::map<char, std::string> paths;
  for (char c : names) paths[c] = f->Put(std::string(1, c), 100);
  return paths;
}

TEST_CASE("clairvoyant: two shuffled epochs fetch from the source as often as Belady's MIN") {
  CacheFixture f;
  const auto paths = Files(&f, "01234567");
  std::vector<std::string> evicted;
  auto cache = f.Make({MemoryTier(400)}, CachePolicyKind::kClairvoyant, &evicted);
  // Four slots, eight files, two epochs (positions 0-7, then 8-15): epoch 2 reads 3 6 0 5 2 7 1 4.
  // MIN (evict the farthest next use; a miss used later than everything held is not placed):
  //   0 1 2 3: placed (free room);  4 (next 15): held 0@10 1@14 2@12 3@8 -> not placed
  //   5 (next 11): evict 1@14;  6 (next 9): evict 2@12;  7 (next 13): held 0@10 3@8 5@11 6@9
  //   -> not placed;  epoch 2: 3 6 0 5 hit; 2 7 1 4 (never used again) are fetched once either
  //   way: prefetched into the slots of 3 6 0 5 (never used again) once each has been read.
  // 12 fetches = 8 + the 4 files the tier cannot hold, each copy made before its file's open
  // (prefetched only once the file it displaces has been read: Cao et al.'s "conservative").
  // Prefetching the next four files after every open (the "aggressive" order) fetched 15.
  const std::string seq = "0123456736052714";
  cache->SetFutureAccesses(Paths(paths, seq));
  Replay(cache, paths, seq);
  const CacheStats stats = cache->Stats();
  CHECK(stats.tiers[0].files_copied + stats.source.hits == 12);  // the source's fetches
  CHECK(stats.tiers[0].files_copied == 10);
  CHECK(stats.tiers[0].read_through == 0);  // every copy was ready before its open
  CHECK(stats.tiers[0].hits == 14);
  CHECK(stats.source.hits == 2);  // 4 and 7 in epoch 1
  CHECK(evicted == Paths(paths, "123605"));
  CHECK(stats.tiers[0].peak_bytes <= 400);
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

TEST_CASE("clairvoyant_static: the most used files placed ahead of the reader, never evicted") {
  CacheFixture f;
  const auto paths = FiveFiles(&f);
  std::vector<std::string> evicted;
  // Two tiers of one slot each. Uses: A 3 (first at 1), B 3 (first at 2), C 1 (first at 0), D 1.
  // Ranking A, B (tie: A used first), C, D: A goes to tier 0, B to tier 1, both before the
  // first read; C, read first, and D are read from the source and never placed.
  auto cache =
      f.Make({MemoryTier(100), MemoryTier(100)}, CachePolicyKind::kClairvoyantStatic, &evicted);
  const std::string seq = "CABABABD";
  cache->SetFutureAccesses(Paths(paths, seq));
  cache->WaitIdle();
  CHECK(cache->Stats().tiers[0].occupancy_files == 1);
  CHECK(cache->Stats().tiers[1].occupancy_files == 1);
  Replay(cache, paths, seq);
  const CacheStats stats = cache->Stats();
  CHECK(stats.tiers[0].files_copied == 1);
  CHECK(stats.tiers[1].files_copied == 1);
  CHECK(stats.tiers[0].hits == 3);  // A
  CHECK(stats.tiers[1].hits == 3);  // B
  CHECK(stats.source.hits == 2);    // C and D
  CHECK(stats.tiers[0].read_through == 0);
  CHECK(evicted.empty());
}

TEST_CASE("policies: a file larger than a tier is skipped there and does not stop smaller ones") {
  for (CachePolicyKind kind :
       {CachePolicyKind::kMonarch, CachePolicyKind::kLru, CachePolicyKind::kClairvoyant,
        CachePolicyKind::kClairvoyantStatic}) {
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
  CHECK(*ParseCachePolicy("clairvoyant_static") == CachePolicyKind::kClairvoyantStatic);
  auto bad = ParseCachePolicy("fifo");
  REQUIRE(!bad.ok());
  CHECK(bad.status().message().find("storage.cache_policy") != std::string::npos);
}

}  // namespace
}  // namespace dlio
