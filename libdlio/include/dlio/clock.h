// Time source. Injected through the Context so tests can use a fake clock.
#pragma once

#include <cstdint>

namespace dlio {

// Monotonic time in nanoseconds. Implementations are safe for concurrent use.
class Clock {
 public:
  virtual ~Clock() = default;
  // Monotonic nanoseconds since an arbitrary origin.
  virtual int64_t NowNanos() const = 0;
  // Blocks the calling thread for about `nanos` (no-op for nanos <= 0).
  virtual void SleepForNanos(int64_t nanos) const = 0;
  // Busy-waits for `nanos`, keeping a core busy as real compute would.
  virtual void SpinForNanos(int64_t nanos) const = 0;
};

// The process's steady clock (std::chrono::steady_clock). Stateless; lives for the whole program.
const Clock* SystemClock();

// Wall-clock microseconds since the Unix epoch, for trace timestamps and reports.
int64_t WallMicros();

}  // namespace dlio
