#include "profile/analysis/interval_union.h"

#include <algorithm>

namespace dlio::profile {

void MergeIntervals(std::vector<Interval>* v) {
  auto by_start = [](const Interval& a, const Interval& b) { return a.start < b.start; };
  // Traces are mostly in time order already; skip the sort then.
  if (!std::is_sorted(v->begin(), v->end(), by_start)) std::sort(v->begin(), v->end(), by_start);
  size_t out = 0;
  for (const Interval& iv : *v) {
    if (iv.end <= iv.start) continue;
    if (out > 0 && iv.start <= (*v)[out - 1].end) {
      (*v)[out - 1].end = std::max((*v)[out - 1].end, iv.end);
    } else {
      (*v)[out++] = iv;
    }
  }
  v->resize(out);
}

int64_t Measure(const std::vector<Interval>& merged) {
  int64_t total = 0;
  for (const Interval& iv : merged) total += iv.end - iv.start;
  return total;
}

int64_t MeasureDifference(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  int64_t covered = 0;
  size_t j = 0;
  for (const Interval& x : a) {
    while (j < b.size() && b[j].end <= x.start) ++j;
    for (size_t k = j; k < b.size() && b[k].start < x.end; ++k) {
      covered += std::min(x.end, b[k].end) - std::max(x.start, b[k].start);
    }
  }
  return Measure(a) - covered;
}

std::vector<Interval> UnionOf(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::vector<Interval> out;
  out.reserve(a.size() + b.size());
  std::merge(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out),
             [](const Interval& x, const Interval& y) { return x.start < y.start; });
  MergeIntervals(&out);
  return out;
}

std::vector<Interval> UnionOfAll(std::vector<std::vector<Interval>> lists) {
  if (lists.empty()) return {};
  while (lists.size() > 1) {
    std::vector<std::vector<Interval>> next;
    next.reserve((lists.size() + 1) / 2);
    for (size_t i = 0; i + 1 < lists.size(); i += 2)
      next.push_back(UnionOf(lists[i], lists[i + 1]));
    if (lists.size() % 2 == 1) next.push_back(std::move(lists.back()));
    lists = std::move(next);
  }
  return std::move(lists.front());
}

}  // namespace dlio::profile
