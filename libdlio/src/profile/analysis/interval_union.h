// Unions of time intervals: the exact measure of "time during which something ran", used for
// wall-clock I/O time and for I/O not hidden behind compute (no time buckets involved).
#pragma once

#include <cstdint>
#include <vector>

namespace dlio::profile {

// Half-open [start, end) in microseconds.
struct Interval {
  int64_t start = 0;
  int64_t end = 0;
};

// Sorts `v` and merges overlapping or touching intervals in place; empty intervals are dropped.
// The result is sorted, disjoint and non-adjacent.
void MergeIntervals(std::vector<Interval>* v);

// Total length of disjoint intervals (the output of MergeIntervals).
int64_t Measure(const std::vector<Interval>& merged);

// Length of `a` not covered by `b` (both merged): measure(a) - measure(a ∩ b).
int64_t MeasureDifference(const std::vector<Interval>& a, const std::vector<Interval>& b);

// Union of two merged lists, merged.
std::vector<Interval> UnionOf(const std::vector<Interval>& a, const std::vector<Interval>& b);

// Union of many merged lists (merged pairwise: O(n log k) for k lists of n intervals in all).
std::vector<Interval> UnionOfAll(std::vector<std::vector<Interval>> lists);

}  // namespace dlio::profile
