// storage.tiers, storage.cache_policy and storage.tiered_source: parsing, errors naming the
// entry, the JSON round trip, and the registered `tiered` storage they build.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "dlio/cache.h"
#include "dlio/config.h"
#include "dlio/loop.h"
#include "dlio/registries.h"
#include "fake_clock.h"
#include "storage/slow_options.h"
#include "test_util.h"

namespace dlio {
namespace {

constexpr char kTiered[] = R"(
storage:
  storage_type: tiered
  tiered_source: slow
  cache_policy: clairvoyant
  tiers:
    - {type: memory, capacity_bytes: 1MiB}
    - {type: directory, path: /tmp/cache, capacity_bytes: 2GiB, threads: 2}
)";

// The first error of parsing `yaml`, validating its keys, and asking the built-in storages about
// theirs (ValidateCapabilities runs the tiered entry's hook), as a run does; "" when none.
std::string ErrorOf(const std::string& yaml) {
  auto c = ParseConfig(yaml, "t.yaml");
  if (!c.ok()) return c.status().message();
  Status v = c->Validate();
  if (!v.ok()) return v.message();
  Registries registries;
  REQUIRE(RegisterBuiltins(&registries).ok());
  v = ValidateCapabilities(*c, registries);
  return v.ok() ? "" : v.message();
}

TEST_CASE("storage.tiers parses a list of tier maps and survives the JSON round trip") {
  auto c = ParseConfig(kTiered, "t.yaml");
  REQUIRE(c.ok());
  const auto& tiers = c->storage.backends.Get<TieredOptions>().tiers;
  REQUIRE(tiers.size() == 2);
  CHECK(tiers[0].type == CacheTierType::kMemory);
  CHECK(tiers[0].capacity_bytes == (1u << 20));
  CHECK(tiers[0].threads == 1);
  CHECK(tiers[1].type == CacheTierType::kDirectory);
  CHECK(tiers[1].path == "/tmp/cache");
  CHECK(tiers[1].capacity_bytes == (uint64_t{2} << 30));
  CHECK(tiers[1].threads == 2);
  CHECK(c->storage.backends.Get<TieredOptions>().policy == CachePolicyKind::kClairvoyant);
  CHECK(c->storage.backends.Get<TieredOptions>().source == "slow");
  CHECK(c->Validate().ok());

  auto again = ParseConfig(ConfigToJson(*c), "config.json");
  REQUIRE(again.ok());
  const auto& again_tiers = again->storage.backends.Get<TieredOptions>().tiers;
  REQUIRE(again_tiers.size() == 2);
  CHECK(again_tiers[1].path == "/tmp/cache");
  CHECK(again_tiers[1].capacity_bytes == (uint64_t{2} << 30));

  StorageOptions o = StorageOptionsFor(*c);  // the tiered keys come with the others
  CHECK(o.name == "tiered");
  const auto& o_tiers = o.backends.Get<TieredOptions>().tiers;
  REQUIRE(o_tiers.size() == 2);
  CHECK(o_tiers[1].type == CacheTierOptions::Type::kDirectory);
  CHECK(o_tiers[1].threads == 2);

  WorkloadConfig over;
  REQUIRE(ApplyOverride(&over, "storage.tiers=[{type: memory, capacity_bytes: 4KiB}]").ok());
  REQUIRE(over.storage.backends.Get<TieredOptions>().tiers.size() == 1);
  CHECK(over.storage.backends.Get<TieredOptions>().tiers[0].capacity_bytes == 4096);
}

TEST_CASE("storage.tiers errors name the entry's index and key") {
  CHECK(ErrorOf("storage: {tiers: [{type: memory, capacity_bytes: 1MiB}, {type: memory, "
                "capacity_bytes: lots}]}")
            .find("storage.tiers[1].capacity_bytes: expected a size") != std::string::npos);
  CHECK(ErrorOf("storage: {tiers: [{type: memory, size: 1}]}").find("'storage.tiers[0].size'") !=
        std::string::npos);
  CHECK(ErrorOf("storage: {tiers: [{type: directory, capacity_bytes: 1}]}")
            .find("storage.tiers[0].path") != std::string::npos);
  CHECK(ErrorOf("storage: {tiers: [{type: memory}]}").find("storage.tiers[0].capacity_bytes") !=
        std::string::npos);
  CHECK(ErrorOf("storage: {tiers: [{type: ssd, capacity_bytes: 1}]}")
            .find("storage.tiers[0].type: 'ssd'") != std::string::npos);
  CHECK(ErrorOf("storage: {tiers: [{type: ssd, capacity_bytes: 1}]}")
            .find("storage.tiers[0].type: 'ssd' is not one of memory, directory") !=
        std::string::npos);
  WorkloadConfig cast;  // only a cast makes an unknown tier type: Validate still refuses it
  CacheTierOptions tier;
  tier.type = static_cast<CacheTierType>(5);
  tier.capacity_bytes = 1;
  cast.storage.backends.Get<TieredOptions>().tiers.push_back(tier);
  CHECK(cast.Validate().message() ==
        "storage.tiers[0].type: value 5 is not one of memory, directory");
  CHECK(ErrorOf("storage: {tiers: [{type: memory, capacity_bytes: 1, threads: 0}]}")
            .find("storage.tiers[0].threads") != std::string::npos);
  CHECK(ErrorOf("storage: {tiers: {type: memory}}").find("storage.tiers: expected a list") !=
        std::string::npos);
  CHECK(ErrorOf("storage: {cache_policy: fifo}").find("storage.cache_policy") != std::string::npos);
  CHECK(ErrorOf("storage: {cache_scope: host}").find("storage.cache_scope") != std::string::npos);
  CHECK(ErrorOf("storage: {storage_type: tiered, tiered_source: tiered}")
            .find("storage.tiered_source") != std::string::npos);
}

// A tiered storage over slow (over posix) with one 1 MiB memory tier under lru.
StorageOptions TieredOverSlow(double slow_latency_us) {
  StorageOptions o;
  o.name = "tiered";
  TieredOptions& tiered = o.backends.Get<TieredOptions>();
  tiered.source = "slow";
  tiered.scope = CacheScope::kProcess;  // built directly, not through the runner
  o.backends.Get<SlowOptions>().inner = "posix";
  o.backends.Get<SlowOptions>().latency_us = slow_latency_us;
  tiered.policy = CachePolicyKind::kLru;
  CacheTierOptions tier;
  tier.capacity_bytes = 1 << 20;
  tiered.tiers = {tier};
  return o;
}

TEST_CASE("tiered storage: built by name over slow, reads cached, writes pass through") {
  testing::TempDir dir;
  Registries registries;
  REQUIRE(RegisterBuiltins(&registries).ok());
  StorageOptions o = TieredOverSlow(10);
  auto caps = StorageCapabilitiesFor(o, registries.storages);
  REQUIRE(caps.ok());
  CHECK(caps->host_files);
  CHECK_FALSE(caps->map_files);
  auto s = MakeStorage(o, registries.storages, SystemClock(), nullptr);
  REQUIRE(s.ok());
  Storage* storage = s->get();
  TieredCache* cache = CacheOf(storage);
  REQUIRE(cache != nullptr);
  const std::string path = dir / "a.bin";
  REQUIRE(WriteFileAtomically(storage, path, "hello cache").ok());
  for (int i = 0; i < 3; ++i) {
    auto f = storage->Open(path, OpenMode::kRead);
    REQUIRE(f.ok());
    std::string buf(11, '\0');
    REQUIRE(*(*f)->ReadAt(0, 11, buf.data()) == 11);
    CHECK(buf == "hello cache");
    CHECK_FALSE((*f)->WriteAt(0, "x", 1).ok());  // opened for reading
  }
  CHECK(cache->Stats().tiers[0].hits == 2);
  // A write through the storage drops the copy: the next read sees the new bytes.
  REQUIRE(WriteFileAtomically(storage, path, "fresh bytes").ok());
  auto f = storage->Open(path, OpenMode::kRead);
  REQUIRE(f.ok());
  std::string buf(11, '\0');
  REQUIRE(*(*f)->ReadAt(0, 11, buf.data()) == 11);
  CHECK(buf == "fresh bytes");
  CHECK(storage->stats().read_bytes == 44);  // counted by the tiered storage itself

  // A forked process (the pytorch pipeline's workers) reads the source, not the parent's cache.
  cache->WaitIdle();  // no copy thread holds the cache's lock at the fork
  const uint64_t hits = cache->Stats().tiers[0].hits;
  const uint64_t opens = hits + cache->Stats().source.hits;
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    auto g = storage->Open(path, OpenMode::kRead);
    std::string got(11, '\0');
    const bool same = g.ok() && (*g)->ReadAt(0, 11, got.data()).ok() && got == "fresh bytes";
    // The child's copy of the cache saw no open.
    const CacheStats after = cache->Stats();
    _exit(same && after.tiers[0].hits + after.source.hits == opens ? 0 : 1);
  }
  int status = -1;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(cache->Stats().tiers[0].hits == hits);

  // Each rank's cache serves its own hits: never collective reads, even over mpiio.
  StorageOptions over_mpiio = o;
  over_mpiio.backends.Get<TieredOptions>().source = "mpiio";
  auto mpiio_caps = StorageCapabilitiesFor(over_mpiio, registries.storages);
  REQUIRE(mpiio_caps.ok());
  CHECK_FALSE(mpiio_caps->collective_reads);
  CHECK(mpiio_caps->needs_mpi);
  CHECK(storage->CollectiveMpiComm(path) == nullptr);

  o.backends.Get<TieredOptions>().source = "tiered";
  auto bad = MakeStorage(o, registries.storages, SystemClock(), nullptr);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("storage.tiered_source") != std::string::npos);
}

// The first 11 bytes of `path`, read through `storage` ("" when they cannot be read).
std::string ReadEleven(Storage* storage, const std::string& path) {
  auto f = storage->Open(path, OpenMode::kRead);
  std::string buf(11, '\0');
  if (!f.ok() || !(*f)->ReadAt(0, buf.size(), buf.data()).ok()) return "";
  return buf;
}

TEST_CASE("tiered storage: the storage it caches sleeps on the clock it was built with") {
  testing::TempDir dir;
  Registries registries;
  REQUIRE(RegisterBuiltins(&registries).ok());
  testing::FakeClock clock(1000);
  auto s = MakeStorage(TieredOverSlow(250), registries.storages, &clock, nullptr);
  REQUIRE(s.ok());
  Storage* storage = s->get();
  const std::string path = dir / "a.bin";
  REQUIRE(WriteFileAtomically(storage, path, "hello cache").ok());
  // The slow source's write slept on the fake clock (no real time passed).
  REQUIRE_FALSE(clock.sleeps().empty());
  const size_t after_write = clock.sleeps().size();
  for (int i = 0; i < 3; ++i) {
    CHECK(ReadEleven(storage, path) == "hello cache");
  }
  CacheOf(storage)->WaitIdle();
  // The first open read the source (through slow); the next two were hits in the memory tier.
  const auto sleeps = clock.sleeps();
  CHECK(sleeps.size() > after_write);
  for (int64_t nanos : sleeps) CHECK(nanos == 250000);
  CHECK(clock.NowNanos() == 1000 + 250000 * static_cast<int64_t>(sleeps.size()));
  CHECK(CacheOf(storage)->Stats().tiers[0].hits == 2);
}

}  // namespace
}  // namespace dlio
