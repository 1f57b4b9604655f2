// The feature vector of one run (profile_compare.h): what the DLIO paper compares.
#include <algorithm>
#include <map>
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
}};

// Bytes a read moved: ret, or the requested size when ret is unknown; -1 for a failed read.
int64_t ReadBytes(const ProfileTrace& t, size_t i) {
  if (t.ret[i] >= 0) return t.ret[i];
  return t.ret[i] == -1 ? t.size_bytes[i] : -1;
}

void SetDarshanFeatures(const ProfileTrace& trace, RunFeatures* f) {
  int64_t reads = 0, seq = 0, consec = 0, files = 0;
  for (const FileCounters& c : ComputeFileCounters(trace)) {
    reads += c.reads;
    seq += c.seq_reads;
    consec += c.consec_reads;
    if (c.reads + c.writes > 0) ++files;
  }
  auto& v = f->values;
  v[static_cast<int>(CompareFeature::kPctSequential)] =
      reads > 0 ? 100.0 * static_cast<double>(seq) / static_cast<double>(reads) : 0;
  v[static_cast<int>(CompareFeature::kPctConsecutive)] =
      reads > 0 ? 100.0 * static_cast<double>(consec) / static_cast<double>(reads) : 0;
  v[static_cast<int>(CompareFeature::kFiles)] = static_cast<double>(files);
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
  double io_us = 0, read_us = 0, bytes = 0;
  std::map<std::pair<int32_t, int32_t>, std::vector<int64_t>> starts;  // (pid, tid) -> read starts
  for (size_t i = 0; i < trace.size(); ++i) {
    if (trace.kind[i] == OpKind::kOther) continue;
    io_us += static_cast<double>(trace.dur_us[i]);
    if (trace.kind[i] != OpKind::kRead || trace.path[i] == ProfileTrace::kNoString) continue;
    const int64_t n = ReadBytes(trace, i);
    if (n < 0) continue;
    f.request_sizes.push_back(n);
    bytes += static_cast<double>(n);
    read_us += static_cast<double>(trace.dur_us[i]);
    starts[{trace.pid[i], trace.tid[i]}].push_back(trace.start_us[i]);
  }
  std::sort(f.request_sizes.begin(), f.request_sizes.end());
  f.gaps_us = ThreadGaps(&starts);
  f.reads = static_cast<int64_t>(f.request_sizes.size());

  auto& v = f.values;
  v[static_cast<int>(CompareFeature::kIoTime)] = io_us / 1e6;
  v[static_cast<int>(CompareFeature::kBytesRead)] = bytes;
  if (!f.request_sizes.empty()) {
    const auto& s = f.request_sizes;
    v[static_cast<int>(CompareFeature::kRequestSizeMin)] = static_cast<double>(s.front());
    v[static_cast<int>(CompareFeature::kRequestSizeMax)] = static_cast<double>(s.back());
    v[static_cast<int>(CompareFeature::kRequestSizeMean)] = bytes / static_cast<double>(s.size());
    v[static_cast<int>(CompareFeature::kRequestSizeMedian)] =
        static_cast<double>(s[(s.size() + 1) / 2 - 1]);
  }
  v[static_cast<int>(CompareFeature::kBandwidthPerOp)] = read_us > 0 ? bytes / (read_us / 1e6) : 0;
  SetDarshanFeatures(trace, &f);
  return f;
}

}  // namespace dlio
