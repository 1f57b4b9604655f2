// FindPeriod: the pause after every B reads (or writes) of a loop, found from where the long gaps
// fall rather than from how long they are. A busy host stretches every gap and adds stalls as
// long as a step's compute at random places; a loop's pauses stay at the same places (after
// each batch), so the places, scored by rank, hold where a threshold on durations does not.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "profile/fit/fit_internal.h"

namespace dlio::fit {
namespace {

// A gap outranks another when it is at least this many times as long; closer pairs are ties
// (the order of two in-batch gaps of 0.5 and 0.8 ms is noise, not structure).
constexpr int64_t kOutrank = 2;
// A period stands when its end gaps outrank this share of the pairs (end, within): half of
// the pairs are ties when gaps are in no order, and a busy host's stalls, longer than twice a
// step's compute, can outrank a fifth of the ends ...
constexpr double kMinScore = 0.75;
// ... at this many of its ends at least (two stalls can fall at the ends of a long period) ...
constexpr int64_t kMinEnds = 3;
// ... and their median is this many times the median within (PauseThreshold's jump) ...
constexpr int64_t kMinRatio = 4;
// ... or, when the ends outrank nearly every gap within (this share of the pairs), this many
// times: a busy host stretches the CPU work between a batch's reads (a CPU hog beside it took a
// loop's in-batch gaps from 1.4 to 1.8 ms, its 5 ms sleeps stayed 5 ms), not the sleeps after.
constexpr double kClearScore = 0.95;
constexpr int64_t kClearRatio = 3;
// Longer periods are not searched (a batch of more reads than this is fitted from bursts).
constexpr int64_t kMaxPeriod = 4096;
// Gaps searched: a loop's period repeats, so the first this many show it (3 ends of the longest
// period and more); the search costs about 60 binary searches per gap, a trace may have millions.
constexpr size_t kMaxGaps = size_t{1} << 15;
// A standing period is replaced by a multiple of it up to this many times as long (stalls that
// make every other or third end of a longer period stand; not every multiple is scored again).
constexpr int64_t kMaxMultiple = 8;

// Counts of a sorted vector: elements <= v, elements >= v.
int64_t CountAtMost(const std::vector<int64_t>& sorted, int64_t v) {
  return std::upper_bound(sorted.begin(), sorted.end(), v) - sorted.begin();
}
int64_t CountAtLeast(const std::vector<int64_t>& sorted, int64_t v) {
  return sorted.end() - std::lower_bound(sorted.begin(), sorted.end(), v);
}

// The gaps of all runs, sorted, and those at period ends (scored and skipped) for one period:
// the gaps within are the pool less both, counted without copying the pool for every period.
struct Split {
  const std::vector<int64_t>* pool = nullptr;
  std::vector<int64_t> ends, skipped;  // sorted

  int64_t Within() const {
    return static_cast<int64_t>(pool->size() - ends.size() - skipped.size());
  }
  int64_t WithinAtMost(int64_t v) const {
    return CountAtMost(*pool, v) - CountAtMost(ends, v) - CountAtMost(skipped, v);
  }
  int64_t WithinAtLeast(int64_t v) const {
    return CountAtLeast(*pool, v) - CountAtLeast(ends, v) - CountAtLeast(skipped, v);
  }
  // The median of the gaps within: the smallest pool value with half of them at or below it.
  int64_t WithinMedian() const {
    const int64_t half = (Within() + 1) / 2;
    auto it = std::partition_point(pool->begin(), pool->end(),
                                   [&](int64_t v) { return WithinAtMost(v) < half; });
    return it == pool->end() ? pool->back() : *it;
  }
};

// The period of `reads`, its ends scored against the gaps within; `leave_out_every` > 0 leaves
// out every such end (those of a period that many times longer: the ends between its ends are
// scored alone).
Period Score(const std::vector<std::vector<int64_t>>& runs, const std::vector<int64_t>& pool,
             int64_t reads, int64_t skip_first, int64_t leave_out_every = 0) {
  Split s;
  s.pool = &pool;
  for (const auto& run : runs) {
    // Gap k follows read k of the run: a period ends after reads reads-1, 2*reads-1, ...
    for (size_t k = static_cast<size_t>(reads - 1); k < run.size();
         k += static_cast<size_t>(reads)) {
      const int64_t nth = static_cast<int64_t>(k + 1) / reads;
      const bool out = nth <= skip_first || (leave_out_every > 0 && nth % leave_out_every == 0);
      (out ? s.skipped : s.ends).push_back(std::max<int64_t>(run[k], 1));
    }
  }
  Period p;
  p.reads = reads;
  p.ends = static_cast<int64_t>(s.ends.size());
  p.within = s.Within();
  if (p.ends < kMinEnds || p.within < 2) return p;
  std::sort(s.ends.begin(), s.ends.end());
  std::sort(s.skipped.begin(), s.skipped.end());
  double wins = 0;
  for (int64_t e : s.ends) {
    const int64_t beaten = s.WithinAtMost(e / kOutrank);
    const int64_t beating = s.WithinAtLeast(e * kOutrank);
    wins += static_cast<double>(beaten) + 0.5 * static_cast<double>(p.within - beaten - beating);
  }
  p.score = wins / (static_cast<double>(p.ends) * static_cast<double>(p.within));
  p.end_median_us = s.ends[s.ends.size() / 2];
  p.end_low_us = s.ends[s.ends.size() / 4];
  p.within_median_us = s.WithinMedian();
  p.split_us = static_cast<int64_t>(
      std::sqrt(static_cast<double>(p.end_median_us) * static_cast<double>(p.within_median_us)));
  p.stalls = s.WithinAtLeast(std::max<int64_t>(p.split_us, 1) + 1);
  return p;
}

// Besides the score: the ends are pauses as a rule, not by a majority of stalls (three in four
// outrank the median within: half a period's ends are gaps within batches), longer than the
// program's own overhead (kMinPauseUs).
bool Stands(const Period& p) {
  const int64_t ratio = p.score >= kClearScore ? kClearRatio : kMinRatio;
  return p.ends >= kMinEnds && p.within >= 2 && p.score >= kMinScore &&
         p.end_median_us >= ratio * p.within_median_us &&
         p.end_low_us >= kOutrank * p.within_median_us && p.end_median_us >= kMinPauseUs;
}

// The runs searched: whole runs in order, the last one cut, kMaxGaps gaps in all at most.
std::vector<std::vector<int64_t>> Capped(const std::vector<std::vector<int64_t>>& runs) {
  std::vector<std::vector<int64_t>> out;
  size_t left = kMaxGaps;
  for (const auto& run : runs) {
    if (left == 0) break;
    const size_t n = std::min(left, run.size());
    out.emplace_back(run.begin(), run.begin() + static_cast<std::ptrdiff_t>(n));
    left -= n;
  }
  return out;
}

}  // namespace

double Significance(const Period& p) {
  if (p.reads == 0) return 0;
  const double m = static_cast<double>(p.ends), n = static_cast<double>(p.within);
  return (p.score - 0.5) * std::sqrt(12 * m * n / (m + n + 1));
}

Period FindPeriod(const std::vector<std::vector<int64_t>>& all_runs, int64_t skip_first) {
  const std::vector<std::vector<int64_t>> runs = Capped(all_runs);
  std::vector<int64_t> pool;
  size_t longest = 0;
  for (const auto& run : runs) {
    for (int64_t g : run) pool.push_back(std::max<int64_t>(g, 1));
    longest = std::max(longest, run.size());
  }
  std::sort(pool.begin(), pool.end());
  std::vector<Period> standing;  // by period, shortest first
  const int64_t last = std::min<int64_t>(static_cast<int64_t>(longest), kMaxPeriod);
  for (int64_t reads = 2; reads <= last; ++reads) {
    Period p = Score(runs, pool, reads, skip_first);
    if (Stands(p)) standing.push_back(p);
  }
  if (standing.empty()) return {};
  // The most significant period, not the best score: a long period has few ends, and two
  // stalls at its ends can outrank nearly every gap.
  const Period* best = &standing.front();
  for (const Period& p : standing) {
    if (Significance(p) > Significance(*best)) best = &p;
  }
  // Whether the ends of `shorter` between those of `longer` (a multiple) are pauses by
  // themselves: then the pauses alternate long and short (a save after every other step), else
  // `shorter` stood only on the ends it shares (stalls at every other end make up the rest).
  auto between_stand = [&](const Period& shorter, const Period& longer) {
    return Stands(Score(runs, pool, shorter.reads, skip_first, longer.reads / shorter.reads));
  };
  for (bool moved = true; moved;) {
    moved = false;
    for (const Period& p : standing) {
      if (p.reads > best->reads && p.reads <= kMaxMultiple * best->reads &&
          p.reads % best->reads == 0 && !between_stand(*best, p)) {
        best = &p;
        moved = true;
        break;
      }
    }
  }
  for (const Period& p : standing) {
    if (p.reads < best->reads && best->reads % p.reads == 0 && between_stand(p, *best)) return p;
  }
  return *best;
}

}  // namespace dlio::fit
