// A loaded host's delays for the FitTrace tests on hand-built traces: gaps stretched by a random
// factor, stalls at random places.
#pragma once

#include <cstdint>
#include <random>

namespace dlio::fit_test {

// The random delays of a loaded host: a gap of `us` becomes us x U(1, stretch), and with
// probability `stall_share` a stall of `stall_us` comes on top.
struct Host {
  Host(uint32_t seed, double stretch, double stall_share = 0, int64_t stall_us = 0)
      : stretch(stretch), stall_share(stall_share), stall_us(stall_us), rng(seed) {}

  double stretch;
  double stall_share;
  int64_t stall_us;
  std::mt19937 rng;

  int64_t Stretch(int64_t us) {
    return static_cast<int64_t>(static_cast<double>(us) *
                                std::uniform_real_distribution<double>(1, stretch)(rng));
  }
  int64_t Gap(int64_t us) {
    const bool stall = std::uniform_real_distribution<double>(0, 1)(rng) < stall_share;
    return Stretch(us) + (stall ? stall_us : 0);
  }
};

}  // namespace dlio::fit_test
