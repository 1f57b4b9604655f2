// A Clock for tests: time moves only when the code under test sleeps or spins (or the test calls
// Advance), so loops driven by it are deterministic and take no real time. Every sleep and spin
// is recorded. Safe for concurrent use.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "dlio/clock.h"

namespace dlio::testing {

class FakeClock final : public Clock {
 public:
  // `start_nanos`: the first NowNanos(); `wall_origin_us`: WallMicros() at NowNanos() == 0.
  explicit FakeClock(int64_t start_nanos = 0, int64_t wall_origin_us = 1'700'000'000'000'000)
      : now_(start_nanos), wall_origin_us_(wall_origin_us) {}

  int64_t NowNanos() const override { return now_.load(); }
  void SleepForNanos(int64_t nanos) const override { Record(&sleeps_, nanos); }
  void SpinForNanos(int64_t nanos) const override { Record(&spins_, nanos); }
  int64_t WallMicros() const override { return wall_origin_us_ + now_.load() / 1000; }

  void Advance(int64_t nanos) const { now_ += nanos; }
  std::vector<int64_t> sleeps() const {
    std::lock_guard<std::mutex> lock(mu_);
    return sleeps_;
  }
  std::vector<int64_t> spins() const {
    std::lock_guard<std::mutex> lock(mu_);
    return spins_;
  }

 private:
  void Record(std::vector<int64_t>* log, int64_t nanos) const {
    std::lock_guard<std::mutex> lock(mu_);
    log->push_back(nanos);
    if (nanos > 0) now_ += nanos;
  }

  mutable std::atomic<int64_t> now_;
  const int64_t wall_origin_us_;
  mutable std::mutex mu_;
  mutable std::vector<int64_t> sleeps_, spins_;
};

}  // namespace dlio::testing
