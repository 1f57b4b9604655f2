// The feature vector of one run (profile_compare.h): what the DLIO paper compares, and the same
// for the writes.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "dlio/profile_compare.h"

namespace dlio {
namespace {

struct FeatureInfo {
  std::string_view name;
  std::string_view unit;
};

constexpr std::array<FeatureInfo, kCompareFeatureCount> kFeatures = {{
    {"io_time_s", "s"},
    {"bytes_read", "bytes"},
    {"request_size_min", "bytes"},
    {"request_size_max", "bytes"},
    {"request_size_mean", "bytes"},
    {"request_size_median", "bytes"},
    {"bandwidth_per_op", "bytes/s"},
    {"pct_sequential", "%"},
    {"pct_consecutive", "%"},
    {"files", "files"},
    {"writes", "writes"},
    {"bytes_written", "bytes"},
    {"write_size_mean", "bytes"},
    {"write_size_median", "bytes"},
    {"files_written", "files"},
}};

// Bytes a read or write moved: ret, or the requested size when ret is unknown; -1 for a failed
// call.
int64_t MovedBytes(const ProfileTrace& t, size_t i) {
  if (t.ret[i] >= 0) return t.ret[i];
  return t.ret[i] == -1 ? t.size_bytes[i] : -1;
}

void SetDarshanFeatures(const ProfileTrace& trace, RunFeatures* f) {
  int64_t reads = 0, seq = 0, consec = 0, files = 0, files_written = 0;
  for (const FileCounters& c : ComputeFileCounters(trace)) {
    reads += c.reads;
    seq += c.seq_reads;
    consec += c.consec_reads;
    if (c.reads + c.writes > 0) ++files;
    if (c.writes > 0) ++files_written;
  }
  auto& v = f->values;
  v[static_cast<int>(CompareFeature::kPctSequential)] =
      reads > 0 ? 100.0 * static_cast<double>(seq) / static_cast<double>(reads) : 0;
  v[static_cast<int>(CompareFeature::kPctConsecutive)] =
      reads > 0 ? 100.0 * static_cast<double>(consec) / static_cast<double>(reads) : 0;
  v[static_cast<int>(CompareFeature::kFiles)] = static_cast<double>(files);
  v[static_cast<int>(CompareFeature::kFilesWritten)] = static_cast<double>(files_written);
}

// Min, max, mean and nearest-rank median of sorted sizes summing to `bytes` (0s when empty).
struct SizeStats {
  double min = 0, max = 0, mean = 0, median = 0;
};
SizeStats StatsOf(const std::vector<int64_t>& s, double bytes) {
  SizeStats r;
  if (s.empty()) return r;
  r.min = static_cast<double>(s.front());
  r.max = static_cast<double>(s.back());
  r.mean = bytes / static_cast<double>(s.size());
  r.median = static_cast<double>(s[(s.size() + 1) / 2 - 1]);
  return r;
}

std::vector<int64_t> ThreadGaps(
    std::map<std::pair<int32_t, int32_t>, std::vector<int64_t>>* starts) {
  std::vector<int64_t> gaps;
  for (auto& [thread, s] : *starts) {
    std::sort(s.begin(), s.end());
    for (size_t i = 1; i < s.size(); ++i) gaps.push_back(s[i] - s[i - 1]);
  }
  std::sort(gaps.begin(), gaps.end());
  return gaps;
}

}  // namespace

std::string_view CompareFeatureName(CompareFeature f) {
  return kFeatures[static_cast<int>(f)].name;
}

std::string_view CompareFeatureUnit(CompareFeature f) {
  return kFeatures[static_cast<int>(f)].unit;
}

RunFeatures ExtractRunFeatures(const ProfileTrace& trace) {
  RunFeatures f;
  double io_us = 0, read_us = 0, bytes = 0, written = 0;
  std::map<std::pair<int32_t, int32_t>, std::vector<int64_t>> starts;  // (pid, tid) -> read starts
  std::set<int32_t> levels;
  for (size_t i = 0; i < trace.size(); ++i) {
    if (trace.kind[i] == OpKind::kOther) continue;
    io_us += static_cast<double>(trace.dur_us[i]);
    const bool read = trace.kind[i] == OpKind::kRead;
    if ((!read && trace.kind[i] != OpKind::kWrite) || trace.path[i] == ProfileTrace::kNoString) {
      continue;
    }
    const int64_t n = MovedBytes(trace, i);
    if (n < 0) continue;
    levels.insert(trace.category[i]);
    if (!read) {
      f.write_sizes.push_back(n);
      written += static_cast<double>(n);
      continue;
    }
    f.request_sizes.push_back(n);
    bytes += static_cast<double>(n);
    read_us += static_cast<double>(trace.dur_us[i]);
    starts[{trace.pid[i], trace.tid[i]}].push_back(trace.start_us[i]);
  }
  std::sort(f.request_sizes.begin(), f.request_sizes.end());
  f.gaps_us = ThreadGaps(&starts);
  std::sort(f.write_sizes.begin(), f.write_sizes.end());
  f.reads = static_cast<int64_t>(f.request_sizes.size());
  f.writes = static_cast<int64_t>(f.write_sizes.size());
  for (int32_t id : levels) f.levels.push_back(trace.String(id));
  std::sort(f.levels.begin(), f.levels.end());

  auto& v = f.values;
  v[static_cast<int>(CompareFeature::kIoTime)] = io_us / 1e6;
  v[static_cast<int>(CompareFeature::kBytesRead)] = bytes;
  const SizeStats r = StatsOf(f.request_sizes, bytes);
  v[static_cast<int>(CompareFeature::kRequestSizeMin)] = r.min;
  v[static_cast<int>(CompareFeature::kRequestSizeMax)] = r.max;
  v[static_cast<int>(CompareFeature::kRequestSizeMean)] = r.mean;
  v[static_cast<int>(CompareFeature::kRequestSizeMedian)] = r.median;
  v[static_cast<int>(CompareFeature::kBandwidthPerOp)] = read_us > 0 ? bytes / (read_us / 1e6) : 0;
  const SizeStats w = StatsOf(f.write_sizes, written);
  v[static_cast<int>(CompareFeature::kWrites)] = static_cast<double>(f.writes);
  v[static_cast<int>(CompareFeature::kBytesWritten)] = written;
  v[static_cast<int>(CompareFeature::kWriteSizeMean)] = w.mean;
  v[static_cast<int>(CompareFeature::kWriteSizeMedian)] = w.median;
  SetDarshanFeatures(trace, &f);
  return f;
}

}  // namespace dlio
