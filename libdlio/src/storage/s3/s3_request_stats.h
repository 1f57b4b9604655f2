// The statistics an S3Client keeps (dlio/s3_stats.h): request counts by kind, bytes, retries and
// errors, and the latencies of GETs, over an interval that Take() ends. Safe for concurrent use.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "dlio/s3_stats.h"

namespace dlio::s3 {

// The kinds of request S3Stats counts (a multipart upload's create, parts, completion and abort
// count as kMultipart; a listing's pages as kList).
enum class S3RequestKind { kGet, kPut, kHead, kList, kDelete, kMultipart, kCopy };

class S3RequestStats {
 public:
  // A request of `kind` that took `attempts` attempts and failed (after them) or got an answer;
  // the object bytes it moved when the answer was a success; `get_ms` >= 0: a GET's latency.
  void Record(S3RequestKind kind, int attempts, bool failed, uint64_t bytes_down, uint64_t bytes_up,
              double get_ms);
  // A request whose answer the caller found to be an error.
  void CountError();
  // The statistics since the last Take (or since construction), then reset.
  S3Stats Take();

 private:
  void KeepLatency(float ms);  // under mu_

  std::mutex mu_;
  S3Stats stats_;
  std::vector<float> get_ms_;  // all GETs' latencies, or a uniform sample past kMaxLatencies
  uint64_t gets_seen_ = 0;     // GETs since Take (more than get_ms_ may hold)
};

}  // namespace dlio::s3
