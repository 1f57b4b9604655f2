// FitTrace with the run-queue delays dlio's LD_PRELOAD tracer records (ProfileEvent::run_delay_us):
// the delay a thread accrued within a pause is left out of its compute time, so a loop beside CPU
// hogs fits the compute of a quiet run. Traces without the values fit as they always did.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>

#include "dlio/profile_fit.h"
#include "profile/analysis_test_util.h"
#include "profile/fit/fit_internal.h"
#include "profile/fit_test_util.h"

namespace dlio {
namespace {

using fit_test::Fit;
using fit_test::Value;

// One thread reads 8 files of one 100 KB sample (files kept open), 2 passes, in batches of 2: a
// pread of 40 us, `gap_us` between the two reads of a batch, `pause_us` after each batch. The
// thread's run-queue delay grows by `gap_delay_us` within each gap and `pause_delay_us` within
// each pause; each pread carries the value when `with_delays` (-1 otherwise).
struct DelayLoop {
  int64_t gap_us = 300, pause_us = 10'000;
  int64_t gap_delay_us = 0, pause_delay_us = 0;
  bool with_delays = true;
};

ProfileTrace Build(const DelayLoop& l) {
  ProfileTrace t;
  int64_t now = 1'000'000, delay = 5'000;  // cumulative since the thread began
  for (int pass = 0; pass < 2; ++pass) {
    for (int f = 0; f < 8; ++f) {
      const std::string path = "/data/train/f_" + std::to_string(pass == 0 ? f : 7 - f) + ".npz";
      if (pass == 0) testing::AddEvent(&t, 1, 1, "open64", now - 10, 2, path);
      testing::AddEvent(&t, 1, 1, "pread", now, 40, path, 0, 100'000, 100'000);
      t.run_delay_us.back() = l.with_delays ? delay : -1;
      const bool batch_end = f % 2 == 1;
      now += 40 + (batch_end ? l.pause_us : l.gap_us);
      delay += batch_end ? l.pause_delay_us : l.gap_delay_us;
    }
  }
  return t;
}

TEST_CASE("RunDelays gives the delay within a pause from the values that bracket it") {
  ProfileTrace t;
  auto add = [&t](int32_t tid, int64_t start, int64_t dur, int64_t delay) {
    testing::AddEvent(&t, 1, tid, "pread", start, dur, "/d/a", 0, 10, 10);
    t.run_delay_us.back() = delay;
  };
  add(1, 0, 100, 1'000);       // read at 100
  add(1, 200, 100, -1);        // not read
  add(1, 1'000, 100, 1'600);   // read at 1100
  add(2, 5'000, 100, 50'000);  // another thread
  const fit::RunDelays d(t);
  CHECK(d.Within(1, 1, 100, 1'100) == 600);
  // [300, 800] is half of the 1000 us between the reads at 100 and 1100: half the growth.
  CHECK(d.Within(1, 1, 300, 800) == 300);
  CHECK(d.Within(1, 1, 1'100, 2'000) == 0);  // no value read after it
  CHECK(d.Within(1, 1, 50, 1'100) == 0);     // none before it
  CHECK(d.Within(1, 2, 100, 1'100) == 0);    // thread 2 has one value only
  CHECK(d.Within(1, 3, 100, 1'100) == 0);    // no values at all
  CHECK(d.Within(1, 1, 800, 300) == 0);
}

TEST_CASE("RunDelays never gives more than the pause") {
  ProfileTrace t;
  testing::AddEvent(&t, 1, 1, "pread", 0, 10, "/d/a", 0, 10, 10);
  t.run_delay_us.back() = 0;
  testing::AddEvent(&t, 1, 1, "pread", 100, 10, "/d/a", 0, 10, 10);
  t.run_delay_us.back() = 500;  // more than the 110 us between the reads: not a schedstat
  CHECK(fit::RunDelays(t).Within(1, 1, 10, 100) == 90);
}

TEST_CASE("fit leaves the run-queue delay within pauses out of the compute time") {
  DelayLoop quiet;
  const FitResult q = Fit(Build(quiet));
  CHECK(Value(q, "reader.batch_size") == "2");
  CHECK(Value(q, "train.computation_time") == "0.01");
  CHECK(q.Find("train.computation_time")->reason.find("run-queue") == std::string::npos);

  // Beside CPU hogs: each pause 30 ms, 20 ms of it waiting for a CPU; each gap within a batch
  // 900 us, 600 of it waiting. The value after a pause is read at the end of the 40 us pread that
  // ends it: 20000 x 30000 / 30040 = 19973 us of the pause's 30000 were waits.
  DelayLoop loaded;
  loaded.pause_us = 30'000;
  loaded.pause_delay_us = 20'000;
  loaded.gap_us = 900;
  loaded.gap_delay_us = 600;
  const FitResult l = Fit(Build(loaded));
  CHECK(Value(l, "reader.batch_size") == "2");
  CHECK(Value(l, "train.computation_time") == "0.010027");
  CHECK(l.Find("train.computation_time")
            ->reason.find("0.019973 s a pause the reading thread "
                          "waited for a CPU") != std::string::npos);

  // The same loop without the values: the pauses as they were, waits included.
  loaded.with_delays = false;
  const FitResult w = Fit(Build(loaded));
  CHECK(Value(w, "reader.batch_size") == "2");
  CHECK(Value(w, "train.computation_time") == "0.03");
}

// Two DataLoader worker processes, each reading batches of 4 samples (files of one 100 KB sample,
// 40 us reads 300 us apart) with 20 ms between its batches, 3 passes; in every batch but the
// first of a pass, one gap within it is a 50 ms stall of which all but 300 us waited for a CPU.
ProfileTrace Workers(bool with_delays) {
  ProfileTrace t;
  for (int32_t pid = 2; pid <= 3; ++pid) {
    int64_t now = 1'000'000 + pid * 7'000, delay = 0;
    for (int pass = 0; pass < 3; ++pass) {
      for (int k = 0; k < 16; ++k) {
        const std::string path = "/data/train/f_" + std::to_string(pid * 100 + k) + ".npz";
        testing::AddEvent(&t, pid, pid, "pread", now, 40, path, 0, 100'000, 100'000);
        t.run_delay_us.back() = with_delays ? delay : -1;
        const bool stall = k % 4 == 1 && k > 4;
        const int64_t gap = k % 4 == 3 ? 20'000 : stall ? 50'000 : 300;
        now += 40 + gap;
        delay += stall ? 49'700 : 0;
      }
    }
  }
  return t;
}

TEST_CASE("fit finds DataLoader workers' batches from their gaps less the run-queue delay") {
  const FitResult with = Fit(Workers(true));
  CHECK(Value(with, "reader.batch_size") == "4");
  const FitResult without = Fit(Workers(false));
  INFO(without.Find("reader.batch_size")->reason);
  CHECK(Value(without, "reader.batch_size") != "4");
}

}  // namespace
}  // namespace dlio
