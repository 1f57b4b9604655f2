#include "dlio/compute.h"

#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <vector>

#include "dlio/registries.h"
#include "fake_clock.h"

namespace dlio {
namespace {

using testing::FakeClock;

ComputeOptions Constant(const std::string& name, double seconds) {
  ComputeOptions o;
  o.name = name;
  o.time.mean = seconds;
  return o;
}

std::unique_ptr<ComputeEmulator> Make(const ComputeOptions& o, const Clock* clock) {
  auto c = MakeComputeEmulator(o, clock);
  REQUIRE(c.ok());
  return std::move(c).value();
}

TEST_CASE("sleep: constant 5 ms asks the clock for 5,000,000 ns each step", "[compute]") {
  FakeClock clock;
  auto c = Make(Constant("sleep", 0.005), &clock);
  for (int64_t step = 0; step < 4; ++step) CHECK(c->Step(step) == 5'000'000);
  CHECK(clock.sleeps() == std::vector<int64_t>(4, 5'000'000));
  CHECK(clock.spins().empty());
  CHECK(clock.NowNanos() == 20'000'000);
}

TEST_CASE("spin: constant time goes to SpinForNanos", "[compute]") {
  FakeClock clock;
  auto c = Make(Constant("spin", 0.25), &clock);
  CHECK(c->Step(0) == 250'000'000);
  CHECK(clock.spins() == std::vector<int64_t>{250'000'000});
  CHECK(clock.sleeps().empty());
}

TEST_CASE("zero time returns at once without asking the clock", "[compute]") {
  FakeClock clock;
  for (const char* name : {"sleep", "spin"}) {
    auto c = Make(Constant(name, 0), &clock);
    CHECK(c->Step(0) == 0);
    CHECK(c->Step(1) == 0);
  }
  CHECK(clock.sleeps().empty());
  CHECK(clock.spins().empty());
}

TEST_CASE("normal draws are reproducible from the seed and vary", "[compute]") {
  ComputeOptions o;
  o.time.type = DistributionSpec::Type::kNormal;
  o.time.mean = 0.1;
  o.time.stdev = 0.02;
  o.seed = 99;
  FakeClock a, b, c;
  auto ea = Make(o, &a), eb = Make(o, &b);
  o.seed = 100;
  auto ec = Make(o, &c);
  std::vector<int64_t> returned;
  for (int64_t step = 0; step < 20; ++step) {
    returned.push_back(ea->Step(step));
    eb->Step(step);
    ec->Step(step);
  }
  CHECK(a.sleeps() == b.sleeps());
  CHECK(a.sleeps() == returned);
  CHECK(a.sleeps() != c.sleeps());
  const std::vector<int64_t> sleeps = a.sleeps();
  std::set<int64_t> distinct(sleeps.begin(), sleeps.end());
  CHECK(distinct.size() == 20);
  for (int64_t ns : sleeps) {
    CHECK(ns > 0);
    CHECK(ns < 200'000'000);  // 5 sigma above the mean
  }
}

TEST_CASE("invalid options are rejected at creation, naming the key", "[compute]") {
  FakeClock clock;
  ComputeOptions o = Constant("sleep", 0.1);
  o.time.type = DistributionSpec::Type::kNormal;
  o.time.stdev = -1;
  auto bad = MakeComputeEmulator(o, &clock);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == StatusCode::kInvalidArgument);
  CHECK(bad.status().message() == "train.computation_time.stdev must be >= 0, got -1");
  o.key = "evaluation.eval_time";
  CHECK(MakeComputeEmulator(o, &clock).status().message().find("evaluation.eval_time.stdev") == 0);
  auto unknown = MakeComputeEmulator(Constant("nap", 1), &clock);
  CHECK(unknown.status().code() == StatusCode::kNotFound);
  CHECK(unknown.status().message() == "unknown compute emulator 'nap' (known: sleep, spin)");
  CHECK(MakeComputeEmulator(Constant("sleep", 1), nullptr).status().code() ==
        StatusCode::kInvalidArgument);
}

TEST_CASE("spin with the system clock takes at least the requested time", "[compute]") {
  const Clock* clock = SystemClock();
  auto c = Make(Constant("spin", 0.002), clock);
  const int64_t start = clock->NowNanos();
  CHECK(c->Step(0) == 2'000'000);
  CHECK(clock->NowNanos() - start >= 2'000'000);
}

TEST_CASE("registry holds sleep and spin", "[compute]") {
  Registries reg;
  REQUIRE(RegisterBuiltinComputes(&reg.computes).ok());
  auto spin = reg.computes.Get("spin");
  REQUIRE(spin.ok());
  FakeClock clock;
  auto c = (*spin)(Constant("sleep", 0.001), &clock);  // the entry's name wins
  REQUIRE(c.ok());
  (*c)->Step(0);
  CHECK(clock.spins() == std::vector<int64_t>{1'000'000});
  CHECK(reg.computes.Contains("sleep"));
}

TEST_CASE("compute emulators declare whether they busy-wait", "[compute]") {
  Registries reg;
  REQUIRE(RegisterBuiltinComputes(&reg.computes).ok());
  auto spin = reg.computes.Find("spin");
  auto sleep = reg.computes.Find("sleep");
  REQUIRE(spin.ok());
  REQUIRE(sleep.ok());
  CHECK(spin->capabilities.busy_waits);
  CHECK_FALSE(sleep->capabilities.busy_waits);
}

}  // namespace
}  // namespace dlio
