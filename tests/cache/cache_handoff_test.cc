// TieredCache::OpenForHandoff: descriptors of complete copies for a cache server's clients.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>

#include "cache_test_util.h"
#include "core/fnv_hash.h"

namespace dlio {
namespace {

using testing::CacheFixture;
using testing::ContentOf;
using testing::DirectoryTier;
using testing::MemoryTier;
using testing::TempDir;

// `n` bytes read from `fd` at its own offset (read(2), not pread), in reads of `step`.
std::string ReadFd(int fd, size_t n, size_t step = 4096) {
  std::string out;
  std::string buf(step, '\0');
  while (out.size() < n) {
    const ssize_t r = ::read(fd, buf.data(), std::min(step, n - out.size()));
    REQUIRE(r > 0);
    out.append(buf.data(), static_cast<size_t>(r));
  }
  return out;
}

TEST_CASE("handoff: the descriptor of every tier type reads the source's bytes") {
  CacheFixture f;
  TempDir tier_dir;
  const std::vector<size_t> sizes = {0, 1, 4097, (1 << 20) + 3};
  for (int which = 0; which < 2; ++which) {
    CAPTURE(which);
    auto tier = which == 0 ? MemoryTier(8 << 20) : DirectoryTier(tier_dir.path(), 8 << 20);
    auto cache = f.Make({tier}, CachePolicyKind::kLru);
    for (size_t i = 0; i < sizes.size(); ++i) {
      const std::string name = StrCat("f", i);
      const std::string path = f.Put(name, sizes[i]);
      for (int round = 0; round < 2; ++round) {
        auto h = cache->OpenForHandoff(path);
        REQUIRE(h.ok());
        CHECK(h->tier == 0);
        CHECK(h->size == sizes[i]);
        CHECK(h->read_through == (round == 0));  // lru copies a miss before serving it
        struct stat st {};
        REQUIRE(::stat(path.c_str(), &st) == 0);
        CHECK(h->mtime_ns == st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec);
        const std::string got = ReadFd(h->fd.get(), sizes[i]);
        CHECK(Fnv1a64(got) == Fnv1a64(ContentOf(name, sizes[i])));
        char extra = 0;
        CHECK(::read(h->fd.get(), &extra, 1) == 0);                // ends at the size
        CHECK(::write(h->fd.get(), "x", 1) == -1);                 // read-only
        CHECK((::fcntl(h->fd.get(), F_GETFD) & FD_CLOEXEC) != 0);  // close-on-exec
      }
    }
    const CacheStats stats = cache->Stats();
    CHECK(stats.tiers[0].hits == sizes.size());
    CHECK(stats.tiers[0].read_through == sizes.size());
    CHECK(stats.tiers[0].bytes_served == 0);  // a client's reads count once reported
    cache->CreditRead(0, 123);
    cache->CreditRead(-1, 7);
    CHECK(cache->Stats().tiers[0].bytes_served == 123);
    CHECK(cache->Stats().source.bytes_served == 7);
  }
}

TEST_CASE("handoff: two descriptors of one copy have their own offsets") {
  CacheFixture f;
  TempDir tier_dir;
  for (int which = 0; which < 2; ++which) {
    CAPTURE(which);
    auto tier = which == 0 ? MemoryTier(1 << 20) : DirectoryTier(tier_dir.path(), 1 << 20);
    auto cache = f.Make({tier}, CachePolicyKind::kLru);
    const std::string path = f.Put("a", 10000);
    const std::string want = ContentOf("a", 10000);
    auto a = cache->OpenForHandoff(path);
    auto b = cache->OpenForHandoff(path);
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    REQUIRE(b->tier == 0);
    CHECK(ReadFd(a->fd.get(), 6000) == want.substr(0, 6000));
    CHECK(ReadFd(b->fd.get(), 100) == want.substr(0, 100));  // not where `a` stopped
    CHECK(ReadFd(a->fd.get(), 4000) == want.substr(6000));
    CHECK(ReadFd(b->fd.get(), 9900) == want.substr(100));
  }
}

TEST_CASE("handoff: the descriptor of an evicted copy keeps reading it") {
  CacheFixture f;
  TempDir tier_dir;
  for (int which = 0; which < 2; ++which) {
    CAPTURE(which);
    auto tier = which == 0 ? MemoryTier(6000) : DirectoryTier(tier_dir.path(), 6000);
    std::vector<std::string> evicted;
    auto cache = f.Make({tier}, CachePolicyKind::kLru, &evicted);
    const std::string a = f.Put("a", 5000);
    const std::string b = f.Put("b", 5000);
    auto held = cache->OpenForHandoff(a);
    REQUIRE(held.ok());
    REQUIRE(held->tier == 0);
    auto other = cache->OpenForHandoff(b);  // evicts a's copy to make room
    REQUIRE(other.ok());
    CHECK(other->tier == 0);
    CHECK(evicted == std::vector<std::string>{a});
    CHECK(ReadFd(held->fd.get(), 5000) == ContentOf("a", 5000));
  }
}

TEST_CASE("handoff: tier -1 when the source serves the open, errors name the path") {
  CacheFixture f;
  auto cache = f.Make({MemoryTier(1000)}, CachePolicyKind::kLru);
  const std::string big = f.Put("big", 5000);  // larger than the tier
  auto h = cache->OpenForHandoff(big);
  REQUIRE(h.ok());
  CHECK(h->tier == -1);
  CHECK(h->fd.get() == -1);
  CHECK(h->size == 5000);
  CHECK(cache->Stats().source.hits == 1);
  auto missing = cache->OpenForHandoff(f.dir / "nope");
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.status().ToString(), Catch::Contains("nope"));
}

}  // namespace
}  // namespace dlio
