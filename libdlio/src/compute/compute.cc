#include "dlio/compute.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "dlio/registries.h"

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

}  // namespace

Result<std::unique_ptr<ComputeEmulator>> MakeComputeEmulator(const ComputeOptions& options,
                                                             const Clock* clock) {
  if (options.name != "sleep" && options.name != "spin") {
    return Status::NotFound("unknown compute emulator '" + options.name + "' (known: sleep, spin)");
  }
  if (clock == nullptr) {
    return Status::InvalidArgument("compute emulator '" + options.name + "': clock is null");
  }
  DLIO_RETURN_NOT_OK(options.time.Validate(options.key));
  return std::unique_ptr<ComputeEmulator>(
      new ClockComputeEmulator(options.name == "spin", options, clock));
}

Status RegisterBuiltinComputes(Registries* registries) {
  auto named = [](const char* name) -> ComputeFactory {
    return [name](const ComputeOptions& options, const Clock* clock) {
      ComputeOptions o = options;
      o.name = name;
      return MakeComputeEmulator(o, clock);
    };
  };
  DLIO_RETURN_NOT_OK(registries->computes.Register(
      {"sleep", "sleeps for each step's drawn compute time (the accelerator is elsewhere)",
       "train.computation_time, train.seed", named("sleep")}));
  DLIO_RETURN_NOT_OK(registries->computes.Register(
      {"spin", "busy-waits for each step's drawn time, keeping a core busy (CPU training)",
       "train.computation_time, train.seed", named("spin")}));
  return Status::OK();
}

}  // namespace dlio
