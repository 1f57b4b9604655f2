// Seeded random durations and sizes: a constant or a distribution, as DLIO's
// `computation_time: {mean, stdev}` / `{type: normal|uniform|gamma|exponential|poisson, ...}`.
#pragma once

#include <cstdint>
#include <random>
#include <string>

#include "dlio/status.h"

namespace dlio {

struct DistributionSpec {
  enum class Type { kConstant, kNormal, kUniform, kGamma, kExponential, kPoisson };
  Type type = Type::kConstant;
  double mean = 0;    // constant value; mean of normal, exponential, poisson (and gamma if no shape)
  double stdev = 0;   // normal (and gamma: with mean gives shape = (mean/stdev)^2)
  double min = 0;     // uniform lower bound; every draw is clipped at >= min for normal too
  double max = 0;     // uniform upper bound
  double shape = 0;   // gamma k (with scale)
  double scale = 0;   // gamma theta
  // InvalidArgument naming `key` (e.g. "train.computation_time") on negative or inconsistent
  // parameters.
  Status Validate(const std::string& key) const;
  double Mean() const;  // expected value
  std::string ToString() const;
};

const char* DistributionTypeName(DistributionSpec::Type type);

// Draws values >= 0 from a spec. Not thread-safe: one per thread/owner.
class Distribution {
 public:
  Distribution(const DistributionSpec& spec, uint64_t seed);
  double Next();
  const DistributionSpec& spec() const { return spec_; }

 private:
  DistributionSpec spec_;
  std::mt19937_64 rng_;
};

// Mixes several values into one well-distributed 64-bit seed (splitmix64), so every random choice
// can derive from (seed, epoch, rank, ...).
uint64_t MixSeed(uint64_t a, uint64_t b = 0, uint64_t c = 0, uint64_t d = 0);

}  // namespace dlio
