// The timeline of AnalyzeTrace: fixed-width buckets, an operation counted in every bucket it
// overlaps, bytes split by overlap, busy time from the I/O interval union.
#include <algorithm>

#include "profile/analysis/analysis_internal.h"

namespace dlio::profile {

int64_t ChooseBucketWidth(int64_t span_us, int64_t requested) {
  int64_t width = requested;
  if (width <= 0) {
    const int64_t target = std::max<int64_t>(1, span_us / 100);
    width = 1;
    for (int64_t decade = 1;; decade *= 10) {
      if (decade >= target) {
        width = decade;
        break;
      }
      if (2 * decade >= target) {
        width = 2 * decade;
        break;
      }
      if (5 * decade >= target) {
        width = 5 * decade;
        break;
      }
    }
  }
  const int64_t min_width = span_us / kMaxTimelineBuckets + 1;
  // span_us > kMaxTimelineBuckets * width, without the product (which overflows for a trace
  // whose timestamps span ~10^13 us or more).
  return (span_us - 1) / width >= kMaxTimelineBuckets ? min_width : width;
}

std::vector<TimelineBucket> BuildTimeline(const ProfileTrace& t, const EventFilter& filter,
                                          int64_t start_us, int64_t end_us, int64_t bucket_us,
                                          const std::vector<Interval>& io_union) {
  const int64_t span = std::max<int64_t>(end_us - start_us, 1);
  const int64_t n = (span + bucket_us - 1) / bucket_us;
  std::vector<TimelineBucket> out(static_cast<size_t>(n));
  for (int64_t b = 0; b < n; ++b) out[b].start_us = start_us + b * bucket_us;
  auto bucket_of = [&](int64_t us) {
    return std::clamp<int64_t>((us - start_us) / bucket_us, 0, n - 1);
  };
  for (size_t i = 0; i < t.size(); ++i) {
    if (!filter.IsIo(t, i)) continue;
    const int64_t s = t.start_us[i];
    const int64_t dur = std::max<int64_t>(t.dur_us[i], 0);
    const int64_t e = s + dur;
    const int64_t first = bucket_of(s);
    const int64_t last = dur > 0 ? bucket_of(e - 1) : first;
    const OpKind k = t.kind[i];
    const double bytes = k == OpKind::kRead || k == OpKind::kWrite
                             ? static_cast<double>(TransferredBytes(t, i))
                             : 0.0;
    for (int64_t b = first; b <= last; ++b) {
      TimelineBucket& bk = out[b];
      double share = 1.0;
      if (first != last) {
        const int64_t lo = std::max(s, bk.start_us);
        const int64_t hi = std::min(e, bk.start_us + bucket_us);
        share = static_cast<double>(hi - lo) / static_cast<double>(dur);
      }
      if (k == OpKind::kRead) {
        ++bk.read_ops;
        bk.bytes_read += bytes * share;
      } else if (k == OpKind::kWrite) {
        ++bk.write_ops;
        bk.bytes_written += bytes * share;
      } else {
        ++bk.metadata_ops;
      }
    }
  }
  for (const Interval& iv : io_union) {
    for (int64_t b = bucket_of(iv.start); b <= bucket_of(iv.end - 1); ++b) {
      const int64_t lo = std::max(iv.start, out[b].start_us);
      const int64_t hi = std::min(iv.end, out[b].start_us + bucket_us);
      if (hi > lo) out[b].io_busy_s += static_cast<double>(hi - lo) / 1e6;
    }
  }
  return out;
}

}  // namespace dlio::profile
