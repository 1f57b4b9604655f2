// Seeded random durations and sizes: a constant or a distribution, as DLIO's
// `computation_time: {mean, stdev}` / `{type: normal|uniform|gamma|exponential|poisson, ...}`.
//
// Units are the caller's (seconds for times, bytes for sizes); every draw is >= max(0, min).
//   constant     mean
//   normal       N(mean, stdev), clipped at max(0, min) (DLIO clips negative times too)
//   uniform      U[min, max]
//   gamma        Gamma(shape, scale) when both are > 0, else from the moments:
//                shape = (mean/stdev)^2, scale = stdev^2/mean
//   exponential  Exp with mean `scale` (DLIO's and numpy's parameter) or, without it, `mean`
//   poisson      with `lam` (DLIO's parameter): Poisson(lam) whole units, as DLIO draws it
//                (np.random.poisson(lam) seconds: mean and variance lam).
//                With `mean` instead (dlio's finer form): an integer number of thousandths of the
//                unit (milliseconds for times) drawn from Poisson(mean * 1000), divided by 1000:
//                the mean is `mean`, the variance mean/1000 and every value a multiple of 0.001.
//                (A Poisson count of whole seconds makes a 0.3 s step take 0, 1 or 2 s.)
// Parameters not given are 0, never numpy's defaults: DLIO itself fails (KeyError) on a missing
// one, so no DLIO config relies on a default.
#pragma once

#include <cstdint>
#include <random>
#include <string>

#include "dlio/config_enums.h"
#include "dlio/status.h"

namespace dlio {

struct DistributionSpec {
  enum class Type { kConstant, kNormal, kUniform, kGamma, kExponential, kPoisson };
  Type type = Type::kConstant;
  double mean = 0;   // constant value; mean of normal, exponential, poisson (and gamma if no shape)
  double stdev = 0;  // normal (and gamma: with mean gives shape = (mean/stdev)^2)
  double min = 0;    // uniform lower bound; every draw is clipped at >= min for normal too
  double max = 0;    // uniform upper bound
  double shape = 0;  // gamma k (with scale)
  double scale = 0;  // gamma theta; exponential: its mean (wins over `mean`)
  double lam = 0;    // poisson: DLIO's Poisson(lam) in whole units (wins over `mean`)
  // InvalidArgument naming `key` (e.g. "train.computation_time") on negative, non-finite or
  // inconsistent parameters, e.g. "train.computation_time.stdev must be >= 0, got -1".
  Status Validate(const std::string& key) const;
  double Mean() const;  // expected value (of the unclipped distribution)
  // Every draw is 0: a constant of 0 (or less, drawn as 0), the unset default.
  bool AlwaysZero() const { return type == Type::kConstant && mean <= 0; }
  std::string ToString() const;  // "normal(mean=0.5, stdev=0.1)"
};

// The config spellings of the types (`type: normal`): the one list that parsing, printing and
// docs/configuration.md use.
template <>
struct EnumNames<DistributionSpec::Type> {
  static constexpr std::array<std::string_view, 6> kNames{"constant", "normal",      "uniform",
                                                          "gamma",    "exponential", "poisson"};
};

// "constant", "normal", "uniform", "gamma", "exponential", "poisson".
const char* DistributionTypeName(DistributionSpec::Type type);

// Draws values >= 0 from a spec. Validate() the spec first: an invalid one never causes undefined
// behaviour (parameters are sanitised) but its draws are meaningless. Not thread-safe: one per
// thread/owner. Next() allocates nothing; the same (spec, seed) gives the same sequence.
class Distribution {
 public:
  Distribution(const DistributionSpec& spec, uint64_t seed);
  double Next();
  const DistributionSpec& spec() const { return spec_; }

 private:
  DistributionSpec spec_;
  double floor_ = 0;     // max(0, min): every draw is clipped here
  bool random_ = false;  // false: parameters are degenerate, every draw is fixed_
  double fixed_ = 0;
  double poisson_units_ = 1;  // poisson draws per unit: 1 with lam, 1000 with mean
  std::mt19937_64 rng_;
  // Only the one matching spec_.type is used; kept as members so draws keep their cached state
  // (normal generates pairs) and Next() recomputes nothing.
  std::normal_distribution<double> normal_;
  std::uniform_real_distribution<double> uniform_;
  std::gamma_distribution<double> gamma_;
  std::exponential_distribution<double> exponential_;
  std::poisson_distribution<int64_t> poisson_;
};

// Mixes several values into one well-distributed 64-bit seed (splitmix64), so every random choice
// can derive from (seed, epoch, rank, ...). Order matters: MixSeed(a, b) != MixSeed(b, a).
uint64_t MixSeed(uint64_t a, uint64_t b = 0, uint64_t c = 0, uint64_t d = 0);

}  // namespace dlio
