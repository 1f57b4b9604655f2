// Time source. Every component that reads the time gets a Clock from its owner, so tests can
// run whole loops on a fake clock.
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
  // Wall-clock microseconds since the Unix epoch: trace timestamps and report times. Not
  // monotonic on a real clock (NTP may step it); durations are measured with NowNanos().
  virtual int64_t WallMicros() const = 0;
};

// The process's clock: std::chrono::steady_clock for NowNanos, system_clock for WallMicros.
// Stateless; lives for the whole program.
const Clock* SystemClock();

}  // namespace dlio
