#include "storage/s3/s3_request_stats.h"

#include <algorithm>
#include <cmath>

namespace dlio::s3 {
namespace {

constexpr size_t kMaxLatencies = size_t{1} << 20;  // GET latencies kept per interval (4 MiB)

// Nearest-rank percentile `p` of `ms` (reordered); 0 when empty.
double Percentile(std::vector<float>* ms, double p) {
  if (ms->empty()) return 0;
  const size_t rank = static_cast<size_t>(std::ceil(p / 100 * static_cast<double>(ms->size())));
  const size_t at = std::clamp<size_t>(rank, 1, ms->size()) - 1;
  std::nth_element(ms->begin(), ms->begin() + static_cast<std::ptrdiff_t>(at), ms->end());
  return (*ms)[at];
}

}  // namespace

void S3RequestStats::Record(S3RequestKind kind, int attempts, bool failed, uint64_t bytes_down,
                            uint64_t bytes_up, double get_ms) {
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t* by_kind[] = {&stats_.get, &stats_.put,       &stats_.head, &stats_.list,
                         &stats_.del, &stats_.multipart, &stats_.copy};
  *by_kind[static_cast<int>(kind)] += static_cast<uint64_t>(attempts);
  stats_.retries += static_cast<uint64_t>(attempts - 1);
  if (failed) {
    ++stats_.errors;
    return;
  }
  stats_.bytes_down += bytes_down;
  stats_.bytes_up += bytes_up;
  if (get_ms >= 0) KeepLatency(static_cast<float>(get_ms));
}

void S3RequestStats::CountError() {
  std::lock_guard<std::mutex> lock(mu_);
  ++stats_.errors;
}

// Every GET's latency up to kMaxLatencies per interval, then a uniform sample of them (reservoir
// sampling), so the percentiles stay unbiased and memory bounded however long an epoch runs.
void S3RequestStats::KeepLatency(float ms) {
  ++gets_seen_;
  if (get_ms_.size() < kMaxLatencies) {
    get_ms_.push_back(ms);
    return;
  }
  uint64_t x = gets_seen_ * 0x9E3779B97F4A7C15ull;  // splitmix64 of the count
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  x ^= x >> 31;
  const uint64_t slot = x % gets_seen_;
  if (slot < kMaxLatencies) get_ms_[slot] = ms;
}

S3Stats S3RequestStats::Take() {
  std::vector<float> ms;
  S3Stats out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    out = stats_;
    stats_ = S3Stats();
    ms.swap(get_ms_);
    gets_seen_ = 0;
  }
  out.get_p50_ms = Percentile(&ms, 50);
  out.get_p90_ms = Percentile(&ms, 90);
  out.get_p99_ms = Percentile(&ms, 99);
  return out;
}

}  // namespace dlio::s3
