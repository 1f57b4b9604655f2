// ComputeEmulator: takes the time a training step would take on the accelerator.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "dlio/clock.h"
#include "dlio/distribution.h"
#include "dlio/registry.h"
#include "dlio/status.h"

namespace dlio {

struct ComputeOptions {
  std::string name = "sleep";  // sleep (Clock::SleepForNanos), spin (Clock::SpinForNanos)
  DistributionSpec time;       // seconds per step
  uint64_t seed = 0;           // derived from (train.seed, rank)
  std::string key = "train.computation_time";  // config key named by validation errors
};

// Not thread-safe: one per training loop.
class ComputeEmulator {
 public:
  virtual ~ComputeEmulator() = default;
  // Emulates one step; returns the nanoseconds it was asked to take (the drawn value).
  // A zero draw returns at once without asking the clock. Allocates nothing.
  virtual int64_t Step(int64_t step) = 0;
};

// What a registered compute emulator declares about itself (Registries::computes), so the runner
// asks the emulator train.compute_emulator names instead of comparing its name.
struct ComputeCapabilities {
  // Takes its time busy-waiting on a core (spin): the pipeline's preprocessing emulation
  // (reader.preprocess_time) then busy-waits too, as a CPU-training framework's would.
  bool busy_waits = false;
};

using ComputeFactory =
    std::function<Result<std::unique_ptr<ComputeEmulator>>(const ComputeOptions&, const Clock*)>;

// Builds the built-in emulator named options.name (sleep, spin) without a registry.
// InvalidArgument when options.time fails Validate(options.key) or clock is null; NotFound naming
// the known emulators for another name. `clock` must outlive the emulator.
Result<std::unique_ptr<ComputeEmulator>> MakeComputeEmulator(const ComputeOptions& options,
                                                             const Clock* clock);

// The compute emulators by name (Registries::computes).
using ComputeRegistry = Registry<ComputeFactory, ComputeCapabilities>;
// Registers the built-in emulators (sleep, spin); called by RegisterBuiltins.
Status RegisterBuiltinComputes(ComputeRegistry* computes);

}  // namespace dlio
