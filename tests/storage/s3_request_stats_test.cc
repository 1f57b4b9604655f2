// The s3 client's statistics (storage/s3/s3_request_stats.h): counts by kind with retries and
// errors, bytes of successes only, nearest-rank GET percentiles, and an interval per Take.
#include "storage/s3/s3_request_stats.h"

#include <catch2/catch.hpp>

namespace dlio::s3 {
namespace {

TEST_CASE("s3 stats: requests by kind, retries, errors and bytes, reset by Take") {
  S3RequestStats st;
  st.Record(S3RequestKind::kGet, 3, false, 1000, 0, 5.0);  // two retries, then 1000 bytes
  st.Record(S3RequestKind::kGet, 2, true, 0, 0, -1);       // failed after 2 attempts
  st.Record(S3RequestKind::kPut, 1, false, 0, 700, -1);
  st.Record(S3RequestKind::kMultipart, 1, false, 0, 5 << 20, -1);
  st.Record(S3RequestKind::kHead, 1, false, 0, 0, -1);
  st.Record(S3RequestKind::kList, 1, false, 0, 0, -1);
  st.Record(S3RequestKind::kDelete, 1, false, 0, 0, -1);
  st.Record(S3RequestKind::kCopy, 1, false, 0, 0, -1);
  st.CountError();  // e.g. a 403 the caller turned into an error
  const S3Stats s = st.Take();
  CHECK(s.get == 5);
  CHECK(s.put == 1);
  CHECK(s.multipart == 1);
  CHECK(s.head == 1);
  CHECK(s.list == 1);
  CHECK(s.del == 1);
  CHECK(s.copy == 1);
  CHECK(s.requests() == 11);
  CHECK(s.retries == 3);
  CHECK(s.errors == 2);
  CHECK(s.bytes_down == 1000);
  CHECK(s.bytes_up == 700 + (5 << 20));
  CHECK(s.get_p50_ms == 5.0);
  CHECK(s.get_p99_ms == 5.0);
  const S3Stats next = st.Take();
  CHECK(next.requests() == 0);
  CHECK(next.errors == 0);
  CHECK(next.get_p50_ms == 0);
}

TEST_CASE("s3 stats: GET latency percentiles are nearest-rank") {
  S3RequestStats st;
  for (int ms = 100; ms >= 1; --ms) st.Record(S3RequestKind::kGet, 1, false, 1, 0, ms);
  const S3Stats s = st.Take();
  CHECK(s.get_p50_ms == 50);
  CHECK(s.get_p90_ms == 90);
  CHECK(s.get_p99_ms == 99);
}

TEST_CASE("s3 stats: past 2^20 GETs the percentiles come from a uniform sample") {
  S3RequestStats st;
  const int n = 3 << 20;  // latencies 0 .. n-1 ms, in order: a biased sample would show
  for (int i = 0; i < n; ++i) st.Record(S3RequestKind::kGet, 1, false, 1, 0, i);
  const S3Stats s = st.Take();
  CHECK(s.get == static_cast<uint64_t>(n));
  CHECK(s.bytes_down == static_cast<uint64_t>(n));
  CHECK(s.get_p50_ms == Approx(0.50 * n).epsilon(0.01));
  CHECK(s.get_p90_ms == Approx(0.90 * n).epsilon(0.01));
  CHECK(s.get_p99_ms == Approx(0.99 * n).epsilon(0.01));
}

}  // namespace
}  // namespace dlio::s3
