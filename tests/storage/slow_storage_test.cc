#include "storage/slow_storage.h"

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <functional>
#include <mutex>
#include <vector>

#include "dlio/registries.h"
#include "dlio/storage.h"
#include "dlio/storage_wrapper.h"
#include "fake_clock.h"
#include "storage/slow_options.h"

namespace dlio {
namespace {

using testing::FakeClock;

std::unique_ptr<Storage> MakeSlow(const StorageOptions& options, const Clock* clock,
                                  Tracer* tracer = nullptr) {
  Registries registries;
  REQUIRE(RegisterBuiltinStorages(&registries.storages).ok());
  auto s = MakeStorage(options, registries.storages, clock, tracer);
  REQUIRE(s.ok());
  return std::move(s).value();
}

std::vector<int64_t> RunReads(const StorageOptions& options, int reads) {
  FakeClock clock(1000);
  auto s = MakeSlow(options, &clock);
  {
    auto f = s->Open("/mem/a.bin", OpenMode::kWrite);
    REQUIRE(f.ok());
    std::vector<uint8_t> data(1024, 1);
    REQUIRE((*f)->WriteAt(0, data.data(), data.size()).ok());
    for (int i = 0; i < reads; ++i) REQUIRE(*(*f)->ReadAt(0, 1024, data.data()) == 1024);
  }
  return clock.sleeps();
}

TEST_CASE("slow: every read and write sleeps the configured latency on the clock") {
  StorageOptions o;
  o.name = "slow";
  o.backends.Get<SlowOptions>().inner = "memory";
  o.backends.Get<SlowOptions>().latency_us = 250;
  auto sleeps = RunReads(o, 3);
  CHECK(sleeps == std::vector<int64_t>(4, 250000));  // 1 write + 3 reads

  o.backends.Get<SlowOptions>().bandwidth_mib_s = 1;  // 1024 bytes at 1 MiB/s = 976.5625 us more
  sleeps = RunReads(o, 1);
  REQUIRE(sleeps.size() == 2);
  CHECK(sleeps[0] == 250000 + 976562);
}

TEST_CASE("slow: measured delay includes the injected latency (fake clock)") {
  StorageOptions o;
  o.name = "slow";
  o.backends.Get<SlowOptions>().inner = "memory";
  o.backends.Get<SlowOptions>().latency_us = 500;
  FakeClock clock(1000);
  MemoryTracer tracer;
  auto s = MakeSlow(o, &clock, &tracer);
  auto f = s->Open("/x", OpenMode::kWrite);
  REQUIRE(f.ok());
  const char byte = 1;
  REQUIRE((*f)->WriteAt(0, &byte, 1).ok());
  bool found = false;
  for (const auto& e : tracer.Events()) {
    if (std::string(e.name) == "pwrite") {
      CHECK(e.dur_us >= 500);
      found = true;
    }
  }
  CHECK(found);
}

TEST_CASE("slow: jittered latency is deterministic per seed and never negative") {
  StorageOptions o;
  o.name = "slow";
  o.backends.Get<SlowOptions>().inner = "memory";
  o.backends.Get<SlowOptions>().latency_us = 100;
  o.backends.Get<SlowOptions>().latency_stdev_us = 50;
  o.seed = 42;
  const auto a = RunReads(o, 20);
  const auto b = RunReads(o, 20);
  CHECK(a == b);
  o.seed = 43;
  const auto c = RunReads(o, 20);
  CHECK(a != c);
  CHECK(std::adjacent_find(a.begin(), a.end(), std::not_equal_to<>()) != a.end());  // varies

  o.backends.Get<SlowOptions>().latency_us = 10;
  o.backends.Get<SlowOptions>().latency_stdev_us = 1000;
  const auto clipped = RunReads(o, 50);
  CHECK(std::all_of(clipped.begin(), clipped.end(), [](int64_t v) { return v >= 0; }));
  CHECK(std::count(clipped.begin(), clipped.end(), 0) > 0);
}

TEST_CASE("slow: builds the storage it wraps on the clock it was built with") {
  Registries registries;
  REQUIRE(RegisterBuiltinStorages(&registries.storages).ok());
  // A user's storage that records the clock its factory was handed.
  const Clock* handed = nullptr;
  auto probe = [&handed](const StorageOptions&,
                         const StorageBuildEnv& env) -> Result<std::unique_ptr<Storage>> {
    handed = env.clock;
    return NewMemoryStorage();
  };
  REQUIRE(registries.storages.Register({"probe", "records its clock", "", probe}).ok());
  StorageOptions o;
  o.name = "slow";
  o.backends.Get<SlowOptions>().inner = "probe";
  FakeClock clock(1000);
  auto s = MakeStorage(o, registries.storages, &clock, nullptr);
  REQUIRE(s.ok());
  CHECK(handed == &clock);
  auto* wrapper = dynamic_cast<StorageWrapper*>(s->get());
  REQUIRE(wrapper != nullptr);
  CHECK(wrapper->inner()->clock() == &clock);
  CHECK((*s)->clock() == &clock);
  // Built with no clock, every layer gets the process's.
  s = MakeStorage(o, registries.storages, nullptr, nullptr);
  REQUIRE(s.ok());
  CHECK(handed == SystemClock());
  CHECK(dynamic_cast<StorageWrapper*>(s->get())->inner()->clock() == SystemClock());
}

TEST_CASE("slow: refuses to wrap itself and names unknown inner storages") {
  Registries registries;
  REQUIRE(RegisterBuiltinStorages(&registries.storages).ok());
  StorageOptions o;
  o.name = "slow";
  o.backends.Get<SlowOptions>().inner = "slow";
  auto s = MakeStorage(o, registries.storages, SystemClock(), nullptr);
  CHECK(s.status().code() == StatusCode::kInvalidArgument);
  CHECK_THAT(s.status().message(), Catch::Contains("slow_inner"));
  o.backends.Get<SlowOptions>().inner = "gcs";
  s = MakeStorage(o, registries.storages, SystemClock(), nullptr);
  CHECK(s.status().code() == StatusCode::kNotFound);
  CHECK_THAT(s.status().message(), Catch::Contains("gcs"));
  o.name = "nope";
  CHECK_THAT(MakeStorage(o, registries.storages, SystemClock(), nullptr).status().message(),
             Catch::Contains("posix"));  // lists the known names
}

}  // namespace
}  // namespace dlio
