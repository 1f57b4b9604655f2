#include "profile/analysis/interval_union.h"

#include <catch2/catch.hpp>

#include "profile/analysis/analysis_internal.h"

namespace dlio::profile {
namespace {

TEST_CASE("MergeIntervals merges nested, overlapping and touching intervals") {
  std::vector<Interval> v = {{30, 40}, {0, 10}, {2, 5}, {8, 15}, {15, 20}, {50, 50}, {60, 70}};
  MergeIntervals(&v);
  REQUIRE(v.size() == 3);
  CHECK(v[0].start == 0);
  CHECK(v[0].end == 20);  // [0,10) + nested [2,5) + overlapping [8,15) + touching [15,20)
  CHECK(v[1].start == 30);
  CHECK(v[1].end == 40);
  CHECK(v[2].start == 60);  // the empty [50,50) is dropped
  CHECK(Measure(v) == 40);
}

TEST_CASE("MeasureDifference subtracts the covered part") {
  std::vector<Interval> io = {{0, 20}, {30, 40}};
  std::vector<Interval> compute = {{8, 35}};
  CHECK(MeasureDifference(io, compute) == 13);  // [0,8) + [35,40)
  CHECK(MeasureDifference(io, {}) == 30);
  CHECK(MeasureDifference(io, {{-5, 100}}) == 0);
  CHECK(MeasureDifference(io, {{1, 2}, {3, 4}, {19, 31}, {39, 45}}) == 30 - 1 - 1 - 1 - 1 - 1);
  const auto u = UnionOf(io, compute);
  REQUIRE(u.size() == 1);
  CHECK(Measure(u) == 40);
}

}  // namespace
}  // namespace dlio::profile

namespace dlio::profile {
namespace {

TEST_CASE("ChooseBucketWidth: 1-2-5 series for ~100 buckets, at most a million buckets") {
  CHECK(ChooseBucketWidth(0, 0) == 1);
  CHECK(ChooseBucketWidth(99, 0) == 1);
  CHECK(ChooseBucketWidth(250, 0) == 2);
  CHECK(ChooseBucketWidth(301, 0) == 5);
  CHECK(ChooseBucketWidth(1000, 0) == 10);
  CHECK(ChooseBucketWidth(33000, 0) == 500);
  CHECK(ChooseBucketWidth(150000000, 0) == 2000000);
  CHECK(ChooseBucketWidth(1000, 7) == 7);  // a requested width stands
  CHECK(ChooseBucketWidth(kMaxTimelineBuckets * 3, 3) == 3);
  CHECK(ChooseBucketWidth(10000000, 1) == 11);  // 10 s at 1 us: widened to <= 1e6 buckets
}

}  // namespace
}  // namespace dlio::profile
