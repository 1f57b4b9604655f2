// Pieces of AnalyzeTrace kept in their own files: size statistics, access patterns, timeline.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "dlio/profile_analysis.h"
#include "profile/analysis/interval_union.h"

namespace dlio::profile {

// True for the events AnalyzeTrace counts as I/O: kind is not kOther and the event is not the
// DXT_MPIIO duplicate of a DXT_POSIX row (when `posix_only`).
struct EventFilter {
  bool posix_only = false;  // the trace has both DXT layers (POSIX and MPIIO rows)
  int32_t mpiio_category = -1;
  bool IsIo(const ProfileTrace& t, size_t i) const {
    return t.kind[i] != OpKind::kOther && !(posix_only && t.category[i] == mpiio_category);
  }
};

// Bytes an event moved: ret when known (>= 0), else the requested size; 0 for failed calls.
int64_t TransferredBytes(const ProfileTrace& t, size_t i);
// The request size: the requested size when known, else (reads and writes) the bytes moved; -1
// when neither is.
int64_t RequestSize(const ProfileTrace& t, size_t i);

// A multiset of sizes as value -> count (request sizes take few distinct values).
using SizeHistogram = std::unordered_map<int64_t, int64_t>;
SizeStats StatsOf(const SizeHistogram& h);

// Access pattern of every path that has reads or writes.
std::unordered_map<std::string, AccessPattern> AccessPatterns(const ProfileTrace& t,
                                                              const EventFilter& filter);

// Timeline buckets over [start_us, end_us) of width `bucket_us`; `io_union` is the merged union
// of every I/O interval.
std::vector<TimelineBucket> BuildTimeline(const ProfileTrace& t, const EventFilter& filter,
                                          int64_t start_us, int64_t end_us, int64_t bucket_us,
                                          const std::vector<Interval>& io_union);

// The bucket width for `span_us` of trace: `requested` when > 0, else the 1-2-5 value at or above
// span/100 (at least 1); widened so that there are at most kMaxTimelineBuckets buckets.
constexpr int64_t kMaxTimelineBuckets = 1000000;
int64_t ChooseBucketWidth(int64_t span_us, int64_t requested);

}  // namespace dlio::profile
