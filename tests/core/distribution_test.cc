#include "dlio/distribution.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <set>
#include <string>
#include <vector>

namespace dlio {
namespace {

using Type = DistributionSpec::Type;

struct Moments {
  double mean = 0;
  double stdev = 0;
  double min = 1e300;
};

Moments Sample(const DistributionSpec& spec, uint64_t seed, int n = 20000) {
  Distribution d(spec, seed);
  double sum = 0, sum2 = 0;
  Moments m;
  for (int i = 0; i < n; ++i) {
    const double v = d.Next();
    sum += v;
    sum2 += v * v;
    m.min = std::min(m.min, v);
  }
  m.mean = sum / n;
  m.stdev = std::sqrt(std::max(0.0, sum2 / n - m.mean * m.mean));
  return m;
}

DistributionSpec Spec(Type type) {
  DistributionSpec s;
  s.type = type;
  return s;
}

TEST_CASE("Distribution: constant returns the mean", "[core][distribution]") {
  DistributionSpec s;
  s.mean = 0.25;
  Distribution d(s, 1);
  for (int i = 0; i < 10; ++i) CHECK(d.Next() == 0.25);
  CHECK(s.Mean() == 0.25);
  CHECK(s.ToString() == "constant(0.25)");
}

TEST_CASE("Distribution: moments over 20k draws", "[core][distribution]") {
  SECTION("normal") {
    DistributionSpec s = Spec(Type::kNormal);
    s.mean = 1.0;
    s.stdev = 0.1;
    Moments m = Sample(s, 7);
    CHECK(m.mean == Approx(1.0).margin(0.005));
    CHECK(m.stdev == Approx(0.1).margin(0.005));
    CHECK(s.ToString() == "normal(mean=1, stdev=0.1)");
  }
  SECTION("normal is clipped at zero") {
    DistributionSpec s = Spec(Type::kNormal);
    s.mean = 0.01;
    s.stdev = 0.1;
    CHECK(Sample(s, 7).min == 0.0);
  }
  SECTION("normal is clipped at min") {
    DistributionSpec s = Spec(Type::kNormal);
    s.mean = 1.0;
    s.stdev = 0.5;
    s.min = 0.8;
    CHECK(Sample(s, 7).min == 0.8);
  }
  SECTION("uniform") {
    DistributionSpec s = Spec(Type::kUniform);
    s.min = 2;
    s.max = 4;
    Moments m = Sample(s, 8);
    CHECK(m.mean == Approx(3.0).margin(0.02));
    CHECK(m.stdev == Approx(2 / std::sqrt(12.0)).margin(0.02));
    CHECK(m.min >= 2.0);
    CHECK(s.Mean() == 3.0);
  }
  SECTION("gamma from shape and scale") {
    DistributionSpec s = Spec(Type::kGamma);
    s.shape = 4;
    s.scale = 0.5;  // mean 2, stdev 1
    Moments m = Sample(s, 9);
    CHECK(m.mean == Approx(2.0).margin(0.03));
    CHECK(m.stdev == Approx(1.0).margin(0.03));
    CHECK(s.Mean() == 2.0);
  }
  SECTION("gamma from mean and stdev") {
    DistributionSpec s = Spec(Type::kGamma);
    s.mean = 0.5;
    s.stdev = 0.2;
    Moments m = Sample(s, 10);
    CHECK(m.mean == Approx(0.5).margin(0.01));
    CHECK(m.stdev == Approx(0.2).margin(0.01));
  }
  SECTION("exponential") {
    DistributionSpec s = Spec(Type::kExponential);
    s.mean = 0.3;
    Moments m = Sample(s, 11);
    CHECK(m.mean == Approx(0.3).margin(0.01));
    CHECK(m.stdev == Approx(0.3).margin(0.015));
  }
  SECTION("poisson counts milliseconds") {
    DistributionSpec s = Spec(Type::kPoisson);
    s.mean = 0.05;  // Poisson(50) ms: stdev sqrt(50) ms
    Moments m = Sample(s, 12);
    CHECK(m.mean == Approx(0.05).margin(0.0005));
    CHECK(m.stdev == Approx(std::sqrt(50.0) / 1000).margin(0.0005));
    Distribution d(s, 3);
    for (int i = 0; i < 100; ++i) {
      const double ms = d.Next() * 1000;
      CHECK(ms == Approx(std::round(ms)).margin(1e-9));
    }
  }
}

// DLIO's own parameters: np.random.exponential(scale) and np.random.poisson(lam).
TEST_CASE("Distribution: DLIO's exponential scale and poisson lam", "[core][distribution]") {
  SECTION("exponential scale is its mean") {
    DistributionSpec s = Spec(Type::kExponential);
    s.scale = 2.0;  // Exp(mean 2): stdev 2
    Moments m = Sample(s, 21);
    CHECK(m.mean == Approx(2.0).margin(0.06));
    CHECK(m.stdev == Approx(2.0).margin(0.08));
    CHECK(s.Mean() == 2.0);
    CHECK(s.ToString() == "exponential(scale=2)");
    CHECK(s.Validate("k").ok());
  }
  SECTION("poisson lam draws whole units") {
    DistributionSpec s = Spec(Type::kPoisson);
    s.lam = 1.0;  // Poisson(1): mean 1, variance 1, P(0) = 1/e
    Distribution d(s, 22);
    const int n = 20000;
    double sum = 0, sum2 = 0;
    int zeros = 0;
    for (int i = 0; i < n; ++i) {
      const double v = d.Next();
      CHECK(v == std::round(v));
      sum += v;
      sum2 += v * v;
      zeros += v == 0;
    }
    const double mean = sum / n;
    CHECK(mean == Approx(1.0).margin(0.03));
    CHECK(sum2 / n - mean * mean == Approx(1.0).margin(0.05));
    CHECK(zeros / double(n) == Approx(std::exp(-1.0)).margin(0.015));
    CHECK(s.Mean() == 1.0);
    CHECK(s.ToString() == "poisson(lam=1)");
  }
  SECTION("DLIO's parameter wins over mean; checked") {
    DistributionSpec s = Spec(Type::kExponential);
    s.scale = 2;
    s.mean = 3;
    CHECK(s.Mean() == 2);
    CHECK(Distribution(s, 1).Next() != 0);
    s = Spec(Type::kPoisson);
    s.lam = -1;
    Status st = s.Validate("train.computation_time");
    REQUIRE_FALSE(st.ok());
    CHECK(st.message() == "train.computation_time.lam must be >= 0, got -1");
    s.lam = 1e13;
    CHECK(s.Validate("k").message().find("k.lam must be <= ") == 0);
  }
}

TEST_CASE("Distribution: same seed same draws, other seed other draws", "[core][distribution]") {
  for (Type t : {Type::kNormal, Type::kUniform, Type::kGamma, Type::kExponential, Type::kPoisson}) {
    DistributionSpec s = Spec(t);
    s.mean = 1;
    s.stdev = 0.3;
    s.max = 2;
    Distribution a(s, 42), b(s, 42), c(s, 43);
    std::vector<double> va, vb, vc;
    for (int i = 0; i < 50; ++i) {
      va.push_back(a.Next());
      vb.push_back(b.Next());
      vc.push_back(c.Next());
    }
    INFO(DistributionTypeName(t));
    CHECK(va == vb);
    CHECK(va != vc);
  }
}

TEST_CASE("DistributionSpec::Validate names the key", "[core][distribution]") {
  const std::string key = "train.computation_time";
  DistributionSpec s = Spec(Type::kNormal);
  s.mean = 1;
  s.stdev = -1;
  Status st = s.Validate(key);
  CHECK(st.code() == StatusCode::kInvalidArgument);
  CHECK(st.message() == "train.computation_time.stdev must be >= 0, got -1");

  s = Spec(Type::kConstant);
  s.mean = -0.5;
  CHECK(s.Validate(key).message() == "train.computation_time.mean must be >= 0, got -0.5");

  s = Spec(Type::kUniform);
  s.min = 3;
  s.max = 1;
  CHECK(s.Validate(key).message() ==
        "train.computation_time: uniform needs max >= min, got min=3 max=1");

  s = Spec(Type::kGamma);
  s.mean = 1;
  CHECK(s.Validate(key).message().find("gamma needs shape and scale, or mean and stdev") !=
        std::string::npos);
  s.shape = 2;
  CHECK(s.Validate(key).message().find("gamma needs both shape and scale") != std::string::npos);
  s.scale = 0.5;
  CHECK(s.Validate(key).ok());

  s = Spec(Type::kPoisson);
  s.mean = -2;
  CHECK(s.Validate("reader.preprocess_time").message() ==
        "reader.preprocess_time.mean must be >= 0, got -2");
  s.mean = 0;
  CHECK(s.Validate(key).ok());

  s = Spec(Type::kNormal);
  s.mean = std::nan("");
  CHECK(s.Validate(key).message().find("train.computation_time.mean must be a finite") == 0);
}

TEST_CASE("Distribution: degenerate specs never misbehave", "[core][distribution]") {
  DistributionSpec s = Spec(Type::kNormal);
  s.mean = 0.2;  // stdev 0: constant
  Distribution d(s, 1);
  CHECK(d.Next() == 0.2);
  s = Spec(Type::kExponential);  // mean 0
  CHECK(Distribution(s, 1).Next() == 0.0);
  s = Spec(Type::kGamma);
  s.stdev = -1;  // invalid, sanitised
  s.mean = 0.1;
  CHECK(Distribution(s, 1).Next() == 0.1);
}

TEST_CASE("MixSeed depends on every input and its position", "[core][distribution]") {
  std::set<uint64_t> seen;
  for (uint64_t a = 0; a < 4; ++a)
    for (uint64_t b = 0; b < 4; ++b)
      for (uint64_t c = 0; c < 4; ++c)
        for (uint64_t d = 0; d < 4; ++d) seen.insert(MixSeed(a, b, c, d));
  CHECK(seen.size() == 256);
  CHECK(MixSeed(1, 2) != MixSeed(2, 1));
  CHECK(MixSeed(5) == MixSeed(5, 0, 0, 0));
  CHECK(MixSeed(123, 1, 0) == MixSeed(123, 1, 0));
}

}  // namespace
}  // namespace dlio
