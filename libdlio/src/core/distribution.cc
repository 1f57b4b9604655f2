#include "dlio/distribution.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace dlio {
namespace {

// Keeps a draw of Poisson(mean * 1000) far from int64 overflow.
constexpr double kMaxPoissonMean = 1e12;
constexpr double kPoissonUnitsPerValue = 1000.0;

std::string FormatNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

Status NonNegative(const std::string& key, const char* field, double v) {
  if (!std::isfinite(v)) {
    return Status::InvalidArgument(key + "." + field + " must be a finite number, got " +
                                   FormatNumber(v));
  }
  if (v < 0) {
    return Status::InvalidArgument(key + "." + field + " must be >= 0, got " + FormatNumber(v));
  }
  return Status::OK();
}

bool GammaHasShapeScale(const DistributionSpec& s) { return s.shape > 0 && s.scale > 0; }

// DLIO's parameter of a one-parameter distribution (exponential's scale, poisson's lam) wins
// over dlio's `mean`, which a number given before a sub-key override leaves behind.
double ExponentialMean(const DistributionSpec& s) { return s.scale > 0 ? s.scale : s.mean; }
double PoissonMean(const DistributionSpec& s) { return s.lam > 0 ? s.lam : s.mean; }

uint64_t SplitMix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

const char* DistributionTypeName(DistributionSpec::Type type) { return EnumName(type).data(); }

Status DistributionSpec::Validate(const std::string& key) const {
  DLIO_RETURN_NOT_OK(NonNegative(key, "mean", mean));
  DLIO_RETURN_NOT_OK(NonNegative(key, "stdev", stdev));
  DLIO_RETURN_NOT_OK(NonNegative(key, "min", min));
  DLIO_RETURN_NOT_OK(NonNegative(key, "max", max));
  DLIO_RETURN_NOT_OK(NonNegative(key, "shape", shape));
  DLIO_RETURN_NOT_OK(NonNegative(key, "scale", scale));
  DLIO_RETURN_NOT_OK(NonNegative(key, "lam", lam));
  switch (type) {
    case Type::kConstant:
    case Type::kNormal:
      break;
    case Type::kExponential:
      break;
    case Type::kUniform:
      if (max < min) {
        return Status::InvalidArgument(key + ": uniform needs max >= min, got min=" +
                                       FormatNumber(min) + " max=" + FormatNumber(max));
      }
      break;
    case Type::kGamma:
      if ((shape > 0) != (scale > 0)) {
        return Status::InvalidArgument(key + ": gamma needs both shape and scale > 0, got shape=" +
                                       FormatNumber(shape) + " scale=" + FormatNumber(scale));
      }
      if (!GammaHasShapeScale(*this) && !(mean > 0 && stdev > 0)) {
        return Status::InvalidArgument(
            key + ": gamma needs shape and scale, or mean and stdev, all > 0 (got mean=" +
            FormatNumber(mean) + " stdev=" + FormatNumber(stdev) + ")");
      }
      break;
    case Type::kPoisson:
      if (PoissonMean(*this) > kMaxPoissonMean) {
        return Status::InvalidArgument(
            StrCat(key, lam > 0 ? ".lam" : ".mean", " must be <= ", FormatNumber(kMaxPoissonMean),
                   " for poisson, got ", FormatNumber(PoissonMean(*this))));
      }
      break;
  }
  return Status::OK();
}

double DistributionSpec::Mean() const {
  switch (type) {
    case Type::kUniform:
      return (min + max) / 2;
    case Type::kGamma:
      return GammaHasShapeScale(*this) ? shape * scale : mean;
    case Type::kExponential:
      return ExponentialMean(*this);
    case Type::kPoisson:
      return PoissonMean(*this);
    default:
      return mean;
  }
}

std::string DistributionSpec::ToString() const {
  const std::string name = DistributionTypeName(type);
  switch (type) {
    case Type::kConstant:
      return name + "(" + FormatNumber(mean) + ")";
    case Type::kNormal: {
      std::string s = name + "(mean=" + FormatNumber(mean) + ", stdev=" + FormatNumber(stdev);
      if (min > 0) s += ", min=" + FormatNumber(min);
      return s + ")";
    }
    case Type::kUniform:
      return name + "(min=" + FormatNumber(min) + ", max=" + FormatNumber(max) + ")";
    case Type::kGamma:
      if (GammaHasShapeScale(*this)) {
        return name + "(shape=" + FormatNumber(shape) + ", scale=" + FormatNumber(scale) + ")";
      }
      return name + "(mean=" + FormatNumber(mean) + ", stdev=" + FormatNumber(stdev) + ")";
    case Type::kExponential:
      if (scale > 0) return name + "(scale=" + FormatNumber(scale) + ")";
      return name + "(mean=" + FormatNumber(mean) + ")";
    case Type::kPoisson:
      if (lam > 0) return name + "(lam=" + FormatNumber(lam) + ")";
      return name + "(mean=" + FormatNumber(mean) + ")";
  }
  return name;
}

namespace {

// Sanitises a parameter so an unvalidated spec never hands the standard distributions a
// precondition violation.
double Positive(double v) { return std::isfinite(v) && v > 0 ? v : 0; }

}  // namespace

Distribution::Distribution(const DistributionSpec& spec, uint64_t seed)
    : spec_(spec), floor_(Positive(spec.min)), rng_(seed) {
  const double mean = Positive(spec.mean);
  const double stdev = Positive(spec.stdev);
  fixed_ = mean;
  switch (spec.type) {
    case DistributionSpec::Type::kConstant:
      break;
    case DistributionSpec::Type::kNormal:
      random_ = stdev > 0;
      if (random_) normal_ = std::normal_distribution<double>(mean, stdev);
      break;
    case DistributionSpec::Type::kUniform: {
      const double lo = Positive(spec.min);
      const double hi = std::max(lo, Positive(spec.max));
      fixed_ = lo;
      random_ = hi > lo;
      if (random_) uniform_ = std::uniform_real_distribution<double>(lo, hi);
      break;
    }
    case DistributionSpec::Type::kGamma: {
      double k = Positive(spec.shape);
      double theta = Positive(spec.scale);
      if (k <= 0 || theta <= 0) {
        k = stdev > 0 ? (mean / stdev) * (mean / stdev) : 0;
        theta = mean > 0 ? stdev * stdev / mean : 0;
      }
      random_ = k > 0 && theta > 0 && std::isfinite(k) && std::isfinite(theta);
      if (random_) gamma_ = std::gamma_distribution<double>(k, theta);
      break;
    }
    case DistributionSpec::Type::kExponential: {
      const double m = Positive(ExponentialMean(spec));
      fixed_ = m;
      random_ = m > 0;
      if (random_) exponential_ = std::exponential_distribution<double>(1.0 / m);
      break;
    }
    case DistributionSpec::Type::kPoisson: {
      const double lam = Positive(spec.lam);
      poisson_units_ = lam > 0 ? 1 : kPoissonUnitsPerValue;
      const double m = lam > 0 ? lam : mean;
      fixed_ = m;
      random_ = m > 0;
      if (random_) {
        poisson_ =
            std::poisson_distribution<int64_t>(std::min(m, kMaxPoissonMean) * poisson_units_);
      }
      break;
    }
  }
}

double Distribution::Next() {
  double v = fixed_;
  if (random_) {
    switch (spec_.type) {
      case DistributionSpec::Type::kConstant:
        break;
      case DistributionSpec::Type::kNormal:
        v = normal_(rng_);
        break;
      case DistributionSpec::Type::kUniform:
        v = uniform_(rng_);
        break;
      case DistributionSpec::Type::kGamma:
        v = gamma_(rng_);
        break;
      case DistributionSpec::Type::kExponential:
        v = exponential_(rng_);
        break;
      case DistributionSpec::Type::kPoisson:
        v = static_cast<double>(poisson_(rng_)) / poisson_units_;
        break;
    }
  }
  return std::max(v, floor_);
}

uint64_t MixSeed(uint64_t a, uint64_t b, uint64_t c, uint64_t d) {
  // Each step is a bijection of the running state plus the next input, so changing any one input
  // changes the result, and the position of an input matters.
  uint64_t h = SplitMix64(a);
  h = SplitMix64(h ^ SplitMix64(b + 0x632be59bd9b4e019ULL));
  h = SplitMix64(h ^ SplitMix64(c + 0x85157af5ULL));
  h = SplitMix64(h ^ SplitMix64(d + 0x2545f4914f6cdd1dULL));
  return h;
}

}  // namespace dlio
