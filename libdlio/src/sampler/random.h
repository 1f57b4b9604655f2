// A small, fast, platform-independent generator for planning: the same seed gives the same plan
// on every standard library (std::uniform_int_distribution does not promise that).
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace dlio::sampler_internal {

__extension__ typedef unsigned __int128 Uint128;

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}

  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  // Uniform in [0, n), n >= 1, without modulo bias (Lemire's multiply-and-reject).
  uint64_t Below(uint64_t n) {
    Uint128 m = static_cast<Uint128>(Next()) * n;
    auto low = static_cast<uint64_t>(m);
    if (low < n) {
      const uint64_t threshold = (0 - n) % n;
      while (low < threshold) {
        m = static_cast<Uint128>(Next()) * n;
        low = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }

 private:
  uint64_t state_;
};

// Fisher-Yates: a uniform permutation of `v`.
template <typename T>
void Shuffle(std::vector<T>* v, uint64_t seed) {
  SplitMix64 rng(seed);
  for (size_t i = v->size(); i > 1; --i) {
    const size_t j = rng.Below(i);
    std::swap((*v)[i - 1], (*v)[j]);
  }
}

// tf.data's shuffle(buffer_size), in place: output position j takes a uniform choice among the
// `window` not-yet-emitted elements that a streaming buffer would hold at that point
// (positions j .. j + window - 1 of the input). The element displaced from position j stays in
// the window, exactly as a streaming buffer keeps it, and input j + window enters next.
template <typename T>
void WindowShuffle(std::vector<T>* v, uint64_t window, uint64_t seed) {
  const size_t n = v->size();
  if (window <= 1 || n < 2) return;
  SplitMix64 rng(seed);
  for (size_t j = 0; j + 1 < n; ++j) {
    const uint64_t span = std::min<uint64_t>(window, n - j);
    const size_t i = j + rng.Below(span);
    std::swap((*v)[j], (*v)[i]);
  }
}

}  // namespace dlio::sampler_internal
