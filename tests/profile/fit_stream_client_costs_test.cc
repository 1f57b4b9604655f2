// reader.client_costs for whole-file streams (pandas.read_csv, tf.data) from hand-built traces:
// a reader that parses each 256 KiB chunk before it reads the next is client-bound within its
// streams (framework, for a model whose library does client work per chunk); one that reads a
// file back to back is not; a model without client work is never set; and the choice holds as a
// loaded host stretches every time and stalls some.
#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <string>

#include "dlio/profile_fit.h"
#include "profile/analysis_test_util.h"
#include "profile/fit_test_util.h"
#include "profile/fit_whole_file_util.h"

namespace dlio {
namespace {

using fit_test::Fit;
using fit_test::kChunk;
using fit_test::ProbeEvery;
using fit_test::Value;
using testing::AddEvent;

constexpr int64_t kStreamFileBytes = 1'600'000;  // 7 reads of 256 KiB or less, then the end of file

struct Stream {
  std::string suffix = "csv";
  int64_t read_us = 60;    // one chunk's read
  int64_t work_us = 900;   // the parse after each chunk, before the next read
  double stretch = 1;      // a loaded host: every time x U(1, stretch) ...
  double stall_share = 0;  // ... and this share of them stalled by 20 ms
  uint32_t seed = 1;
};

class StreamTrace {
 public:
  explicit StreamTrace(const Stream& s) : s_(s), rng_(s.seed) {}

  // 4 files read whole twice, one thread; 60 ms of the program's own work after each file.
  ProfileTrace Build() {
    int64_t now = 1'000'000;
    for (int pass = 0; pass < 2; ++pass) {
      for (int f = 0; f < 4; ++f) {
        now = Load("/d/train/t" + std::to_string(f) + "." + s_.suffix, now);
        now += Time(60'000);
      }
    }
    return std::move(t_);
  }

 private:
  int64_t Time(int64_t us) {
    const double f = std::uniform_real_distribution<double>(1, s_.stretch)(rng_);
    const bool stall = std::uniform_real_distribution<double>(0, 1)(rng_) < s_.stall_share;
    return static_cast<int64_t>(static_cast<double>(us) * f) + (stall ? 20'000 : 0);
  }

  // read_csv's calls: 256 KiB reads from 0, the last one short, a parse after each, then a read
  // at the end of the file that returns 0.
  int64_t Load(const std::string& path, int64_t now) {
    AddEvent(&t_, 1, 1, "open64", now, 2, path);
    now += 5;
    for (int64_t at = 0; at <= kStreamFileBytes; at += kChunk) {
      const int64_t got = std::min(kChunk, kStreamFileBytes - at);
      const int64_t read = Time(s_.read_us);
      AddEvent(&t_, 1, 1, "read", now, read, path, at, kChunk, got);
      now += read + Time(s_.work_us);
    }
    AddEvent(&t_, 1, 1, "read", now, 1, path, kStreamFileBytes, kChunk, 0);
    AddEvent(&t_, 1, 1, "close", now + 3, 1, path);
    return now + 8;
  }

  Stream s_;
  std::mt19937 rng_;
  ProfileTrace t_;
};

FitResult FitStream(const Stream& s) {
  const bool csv = s.suffix == "csv";
  return Fit(StreamTrace(s).Build(), csv ? ProbeEvery("csv", kStreamFileBytes, 800, 2000, 2.65)
                                         : ProbeEvery("tfrecord", kStreamFileBytes, 16, 100'000));
}

std::string StreamReason(const FitResult& r) {
  const FitEntry* e = r.Find("reader.client_costs");
  return e == nullptr ? "(missing)" : e->reason;
}

TEST_CASE("fit client_costs: pandas parsing between its chunk reads is client-bound") {
  const FitResult r = FitStream({});
  REQUIRE(Value(r, "reader.io_model") == "pandas");
  CHECK(Value(r, "reader.client_costs") == "framework");
  // 7 chunk reads of 60 us, 7 parses of 900 us, a 1 us read at the end: 6.3 ms against 0.421 ms.
  INFO(StreamReason(r));
  CHECK(
      StreamReason(r).find("client-bound within its file streams: the median of 8 whole-file reads "
                           "works 6.3 ms between its reads (0.9 ms a gap) against 0.421 ms inside "
                           "them (14.96x") != std::string::npos);
}

TEST_CASE("fit client_costs: a pandas stream read back to back keeps the default") {
  Stream s;
  s.work_us = 20;  // the loop's own overhead between two reads
  const FitResult r = FitStream(s);
  REQUIRE(Value(r, "reader.io_model") == "pandas");
  CHECK(Value(r, "reader.client_costs").find("not inferred") != std::string::npos);
  s.work_us = 90;  // more time than the reads, less than twice it
  CHECK(Value(FitStream(s), "reader.client_costs").find("not inferred") != std::string::npos);
}

TEST_CASE("fit client_costs: a tf.data stream parsing between reads is not set (no client work)") {
  Stream s;
  s.suffix = "tfrecord";
  const FitResult r = FitStream(s);
  REQUIRE(Value(r, "reader.io_model") == "tf.data");
  CHECK(Value(r, "reader.client_costs").find("not inferred") != std::string::npos);
  CHECK(StreamReason(r).find("within its file streams") == std::string::npos);
}

TEST_CASE("fit client_costs: the stream choices hold on a loaded host") {
  for (uint32_t seed = 1; seed <= 8; ++seed) {
    Stream parse, back_to_back;
    parse.stretch = back_to_back.stretch = 3;
    parse.stall_share = back_to_back.stall_share = 0.01;  // 20 ms stalls, some inside streams
    parse.seed = back_to_back.seed = seed;
    back_to_back.work_us = 20;
    INFO("seed " << seed);
    CHECK(Value(FitStream(parse), "reader.client_costs") == "framework");
    CHECK(Value(FitStream(back_to_back), "reader.client_costs").find("not inferred") !=
          std::string::npos);
  }
}

}  // namespace
}  // namespace dlio
