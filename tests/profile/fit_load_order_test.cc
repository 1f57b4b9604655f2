// Threaded readers as a quiet and a loaded host run them: readers taking turns interleave their
// reads differently on every pass, and a busy host's delays more so. The order each reader keeps
// tells whether the files were shuffled (reader.file_shuffle), each reader's own re-reads its
// passes (train.epochs), and each reader's own pauses the steps (reader.batch_size).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "dlio/profile_fit.h"
#include "profile/analysis_test_util.h"
#include "profile/fit_load_util.h"
#include "profile/fit_test_util.h"

namespace dlio {
namespace {

using fit_test::Fit;
using fit_test::Host;
using fit_test::Value;
using testing::AddEvent;

// `threads` reading threads of one process, thread t taking files t, t + threads, ... of `files`
// (an open, a 100 KB pread and a close each, then a 3 ms step), `passes` passes. `shuffle`: each
// thread reads its files in a new order each pass. `fresh`: new threads each pass (tf.data's
// interleave, DataLoader workers re-created per epoch), all started when the last of the pass
// before ends; else the same threads go on, each at its own pace.
struct Readers {
  int threads = 2;
  int files = 16;
  int passes = 3;
  bool shuffle = false;
  bool fresh = false;
};

// `host` null: a quiet host, the threads in lockstep, thread t starting 10 t us after thread 0 in
// even passes and before it in odd ones (which reader opens first flips). Else every gap and
// step through `host`.
ProfileTrace ThreadedReaders(const Readers& r, Host* host) {
  ProfileTrace t;
  std::vector<int64_t> clock(static_cast<size_t>(r.threads), 1'000'000);
  std::vector<std::vector<int>> own(static_cast<size_t>(r.threads));
  for (int f = 0; f < r.files; ++f) own[static_cast<size_t>(f % r.threads)].push_back(f);
  std::mt19937 order_rng(5);
  auto delay = [host](int64_t us) { return host == nullptr ? us : host->Gap(us); };
  for (int e = 0; e < r.passes; ++e) {
    const int64_t start = *std::max_element(clock.begin(), clock.end()) + 1'000;
    for (int k = 0; k < r.threads; ++k) {
      const size_t th = static_cast<size_t>(k);
      const int lead = e % 2 == 0 ? k : r.threads - 1 - k;
      if (r.fresh || e == 0) clock[th] = start + (host == nullptr ? 10 * lead : host->Gap(10));
      if (r.shuffle) std::shuffle(own[th].begin(), own[th].end(), order_rng);
      const int32_t tid = r.fresh ? 100 * (e + 1) + k : k + 1;
      for (int f : own[th]) {
        const std::string path = "/data/train/rec_" + std::to_string(f) + ".bin";
        int64_t& now = clock[th];
        AddEvent(&t, 1, tid, "open64", now, 2, path);
        AddEvent(&t, 1, tid, "pread", now + 5, 40, path, 0, 100'000, 100'000);
        AddEvent(&t, 1, tid, "close", now + 50, 2, path);
        now += 60 + delay(200) + delay(3'000);
      }
    }
  }
  return t;
}

// The fitted reader.file_shuffle of `r`'s loop, its passes and its batch (one sample per thread:
// each thread steps after each of its reads), quiet and for every seed of a loaded host (each gap
// stretched 1-4x, 10% of them stalled 20 ms).
void CheckReaders(const Readers& r, const std::string& want) {
  {
    const FitResult quiet = Fit(ThreadedReaders(r, nullptr));
    INFO("quiet\n" << FitYaml(quiet, {"test"}));
    CHECK(Value(quiet, "reader.file_shuffle") == want);
    CHECK(Value(quiet, "train.epochs") == std::to_string(r.passes));
    CHECK(Value(quiet, "reader.batch_size") == std::to_string(r.threads));
  }
  for (uint32_t seed : {1u, 2u, 3u, 4u, 5u, 6u, 7u, 8u}) {
    Host host(seed, 4, 0.1, 20'000);
    const FitResult loaded = Fit(ThreadedReaders(r, &host));
    INFO("seed " << seed << "\n" << FitYaml(loaded, {"test"}));
    CHECK(Value(loaded, "reader.file_shuffle") == want);
    CHECK(Value(loaded, "train.epochs") == std::to_string(r.passes));
    CHECK(Value(loaded, "reader.batch_size") == std::to_string(r.threads));
  }
}

TEST_CASE("fit, loaded host: new reader threads each pass over the same files are no shuffle") {
  // tf.data's interleave of 2 readers: the readers that open first flip between passes (before:
  // 0% of the merged order's positions agreed, file_shuffle seed on the quiet host).
  Readers r;
  r.fresh = true;
  CheckReaders(r, "off");
  const FitResult quiet = Fit(ThreadedReaders(r, nullptr));
  CHECK_THAT(quiet.Find("reader.file_shuffle")->reason,
             Catch::Contains("successive files of one reading thread agree"));
}

TEST_CASE("fit, loaded host: threads that keep their files and drift apart are no shuffle") {
  // A C loader's 2 pthreads, 3 passes each at its own pace: on a loaded host one starts a pass
  // while the other ends the last, and the merged order's positions move (before: file_shuffle
  // seed for some seeds), the merged reads' passes end early (before: 4 passes of 3), and the
  // merged order's bursts hold 1 to 2 reads (before: batch_size 1 or a long period for some
  // seeds).
  CheckReaders(Readers{}, "off");
  Readers four;
  four.threads = 4;
  four.files = 24;
  CheckReaders(four, "off");
}

TEST_CASE("fit, loaded host: threads that shuffle their own files each pass are a shuffle") {
  Readers r;
  r.shuffle = true;
  CheckReaders(r, "seed");
  r.fresh = true;
  CheckReaders(r, "seed");
}

}  // namespace
}  // namespace dlio
