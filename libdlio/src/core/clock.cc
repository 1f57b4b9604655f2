#include "dlio/clock.h"

#include <chrono>
#include <thread>

namespace dlio {
namespace {

class SteadyClock final : public Clock {
 public:
  int64_t NowNanos() const override {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  void SleepForNanos(int64_t nanos) const override {
    if (nanos > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(nanos));
  }
  void SpinForNanos(int64_t nanos) const override {
    if (nanos <= 0) return;
    const int64_t end = NowNanos() + nanos;
    while (NowNanos() < end) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
  }
  int64_t WallMicros() const override {
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
};

}  // namespace

const Clock* SystemClock() {
  static const SteadyClock clock;  // immutable, so not shared mutable state
  return &clock;
}

}  // namespace dlio
