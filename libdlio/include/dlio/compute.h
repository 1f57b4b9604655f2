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
  std::string name = "sleep";  // sleep, spin
  DistributionSpec time;       // seconds per step
  uint64_t seed = 0;           // derived from (train.seed, rank)
};

// Not thread-safe: one per training loop.
class ComputeEmulator {
 public:
  virtual ~ComputeEmulator() = default;
  // Emulates one step; returns the nanoseconds it was asked to take (the drawn value).
  virtual int64_t Step(int64_t step) = 0;
};

using ComputeFactory =
    std::function<Result<std::unique_ptr<ComputeEmulator>>(const ComputeOptions&, const Clock*)>;

}  // namespace dlio
