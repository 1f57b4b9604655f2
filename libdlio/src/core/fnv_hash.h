// FNV-1a, 64 bits: a hash of names that is stable across runs, builds and platforms (unlike
// std::hash), for seeds and file names derived from paths.
#pragma once

#include <cstdint>
#include <string_view>

namespace dlio {

inline uint64_t Fnv1a64(std::string_view text) {
  uint64_t h = 1469598103934665603ULL;
  for (char c : text) {
    h ^= static_cast<uint8_t>(c);
    h *= 1099511628211ULL;
  }
  return h;
}

}  // namespace dlio
