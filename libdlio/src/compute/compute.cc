#include "dlio/compute.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace dlio {
namespace {

class ClockComputeEmulator final : public ComputeEmulator {
 public:
  ClockComputeEmulator(bool spin, const ComputeOptions& options, const Clock* clock)
      : spin_(spin), clock_(clock), time_(options.time, options.seed) {}

  int64_t Step(int64_t /*step*/) override {
    const double seconds = time_.Next();
    // Saturate instead of overflowing on absurd draws (e.g. a heavy gamma tail).
    constexpr double kMaxNanos = 9.0e18;
    const double nanos = std::min(seconds * 1e9, kMaxNanos);
    const auto ns = static_cast<int64_t>(std::llround(nanos));
    if (ns <= 0) return 0;
    if (spin_) {
      clock_->SpinForNanos(ns);
    } else {
      clock_->SleepForNanos(ns);
    }
    return ns;
  }

 private:
  bool spin_;
  const Clock* clock_;
  Distribution time_;
};

// The built-in emulators: the registrations and MakeComputeEmulator's lookup, in one table.
struct ComputeKind {
  const char* name;
  const char* description;
  bool spin;  // busy-wait instead of sleeping
};
constexpr ComputeKind kComputeKinds[] = {
    {"sleep", "sleeps for each step's drawn compute time (the accelerator is elsewhere)", false},
    {"spin", "busy-waits for each step's drawn time, keeping a core busy (CPU training)", true},
};

Result<std::unique_ptr<ComputeEmulator>> MakeClockEmulator(const ComputeKind& kind,
                                                           const ComputeOptions& options,
                                                           const Clock* clock) {
  if (clock == nullptr) {
    return Status::InvalidArgument("compute emulator '" + options.name + "': clock is null");
  }
  DLIO_RETURN_NOT_OK(options.time.Validate(options.key));
  return std::unique_ptr<ComputeEmulator>(new ClockComputeEmulator(kind.spin, options, clock));
}

}  // namespace

Result<std::unique_ptr<ComputeEmulator>> MakeComputeEmulator(const ComputeOptions& options,
                                                             const Clock* clock) {
  std::string known;
  for (const ComputeKind& kind : kComputeKinds) {
    if (kind.name == options.name) return MakeClockEmulator(kind, options, clock);
    known += std::string(known.empty() ? "" : ", ") + kind.name;
  }
  return Status::NotFound("unknown compute emulator '" + options.name + "' (known: " + known + ")");
}

Status RegisterBuiltinComputes(ComputeRegistry* computes) {
  for (const ComputeKind& kind : kComputeKinds) {
    ComputeFactory factory = [&kind](const ComputeOptions& options, const Clock* clock) {
      ComputeOptions o = options;
      o.name = kind.name;
      return MakeClockEmulator(kind, o, clock);
    };
    DLIO_RETURN_NOT_OK(
        computes->Register({kind.name, kind.description, "train.computation_time, train.seed",
                            std::move(factory), ComputeCapabilities{.busy_waits = kind.spin}}));
  }
  return Status::OK();
}

}  // namespace dlio
