#include "dlio/metrics.h"

#include <catch2/catch.hpp>

using dlio::ComputeBlockMetrics;
using dlio::StepRecord;

namespace {
constexpr int64_t kMs = 1'000'000;
StepRecord Step(int64_t load_ms, int64_t compute_ms, uint64_t samples, uint64_t bytes) {
  StepRecord s;
  s.load_ns = load_ms * kMs;
  s.compute_ns = compute_ms * kMs;
  s.samples = samples;
  s.bytes = bytes;
  return s;
}
}  // namespace

TEST_CASE("AU excludes the first step from numerator and denominator") {
  // Block of 40 ms; step 0 (2+10 ms) is excluded: denominator 28 ms, compute counted 20 ms.
  std::vector<StepRecord> steps = {Step(2, 10, 4, 1000), Step(1, 10, 4, 1000),
                                   Step(3, 10, 4, 1000)};
  auto m = ComputeBlockMetrics(steps, 40 * kMs, 1);
  CHECK(m.steps == 3);
  CHECK(m.steps_counted == 2);
  CHECK(m.duration_s == Approx(0.028));
  CHECK(m.au_percent == Approx(100.0 * 20.0 / 28.0));
  CHECK(m.samples == 8);
  CHECK(m.samples_per_s == Approx(8 / 0.028));
  CHECK(m.bytes == 2000);
  CHECK(m.bytes_per_s == Approx(2000 / 0.028));
  CHECK(m.load_s == Approx(0.004));
  CHECK(m.compute_s == Approx(0.020));
}

TEST_CASE("AU with no excluded steps and pure compute is 100%") {
  std::vector<StepRecord> steps = {Step(0, 5, 1, 10), Step(0, 5, 1, 10)};
  auto m = ComputeBlockMetrics(steps, 10 * kMs, 0);
  CHECK(m.au_percent == Approx(100.0));
  CHECK(m.samples_per_s == Approx(200.0));
}

TEST_CASE("Throughput uses delivered samples, not a batch-size formula") {
  // A partial last batch (2 samples instead of 4) counts as 2.
  std::vector<StepRecord> steps = {Step(1, 1, 4, 0), Step(1, 1, 4, 0), Step(1, 1, 2, 0)};
  auto m = ComputeBlockMetrics(steps, 6 * kMs, 1);
  CHECK(m.samples == 6);
  CHECK(m.samples_per_s == Approx(6 / 0.004));
}

TEST_CASE("A block with only excluded steps yields zeros, not a division by zero") {
  std::vector<StepRecord> steps = {Step(1, 1, 4, 100)};
  auto m = ComputeBlockMetrics(steps, 2 * kMs, 1);
  CHECK(m.steps_counted == 0);
  CHECK(m.au_percent == 0);
  CHECK(m.samples_per_s == 0);
  auto empty = ComputeBlockMetrics({}, 0, 1);
  CHECK(empty.steps == 0);
  CHECK(empty.au_percent == 0);
}

TEST_CASE("Mean and population stdev") {
  auto ms = dlio::ComputeMeanStdev({2, 4, 4, 4, 5, 5, 7, 9});
  CHECK(ms.mean == Approx(5.0));
  CHECK(ms.stdev == Approx(2.0));
  CHECK(dlio::ComputeMeanStdev({}).mean == 0);
}
