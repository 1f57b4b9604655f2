#include "format/content.h"

#include <bit>
#include <cmath>
#include <cstring>

namespace dlio::format_internal {
namespace {

constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;

inline uint64_t Mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Word k of a sample is Mix(base + k * golden): the splitmix64 sequence, addressable by k.
inline uint64_t SampleBase(uint64_t seed, uint64_t sample) {
  return Mix(seed * kGolden + Mix(sample + 0x5851F42D4C957F2Dull));
}

inline void StoreLE(uint64_t w, uint8_t* dst) {
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(dst, &w, 8);
  } else {
    for (int b = 0; b < 8; ++b) dst[b] = static_cast<uint8_t>(w >> (8 * b));
  }
}

}  // namespace

void FillSampleBytes(uint64_t seed, uint64_t sample, uint64_t offset, uint8_t* dst, size_t n) {
  if (n == 0) return;
  const uint64_t base = SampleBase(seed, sample);
  uint64_t word = offset / 8;
  size_t skip = offset % 8;
  uint8_t tmp[8];
  if (skip != 0) {  // leading partial word
    StoreLE(Mix(base + word * kGolden), tmp);
    size_t take = 8 - skip < n ? 8 - skip : n;
    std::memcpy(dst, tmp + skip, take);
    dst += take;
    n -= take;
    ++word;
  }
  uint64_t state = base + word * kGolden;
  while (n >= 8) {
    StoreLE(Mix(state), dst);
    state += kGolden;
    dst += 8;
    n -= 8;
  }
  if (n > 0) {
    StoreLE(Mix(state), tmp);
    std::memcpy(dst, tmp, n);
  }
}

void FillSampleFloats(uint64_t seed, uint64_t sample, uint64_t first, float* dst, size_t n) {
  uint8_t* bytes = reinterpret_cast<uint8_t*>(dst);
  FillSampleBytes(seed, sample, first * 4, bytes, n * 4);
  for (size_t k = 0; k < n; ++k) {
    uint8_t* p = bytes + 4 * k;
    const uint32_t u = static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
                       (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
    const float v = static_cast<float>(u >> 8) * (1.0f / 16777216.0f);
    std::memcpy(p, &v, 4);  // in place: dst aliases the bytes just read
  }
}

uint64_t SplitMix64(uint64_t* state) {
  uint64_t z = (*state += kGolden);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double StandardNormal(uint64_t* state) {
  constexpr double kTwoPi = 6.283185307179586476925;
  const double u1 = (static_cast<double>(SplitMix64(state) >> 11) + 1.0) * 0x1.0p-53;  // (0, 1]
  const double u2 = static_cast<double>(SplitMix64(state) >> 11) * 0x1.0p-53;          // [0, 1)
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
}

int64_t SampleLabel(uint64_t seed, uint64_t sample) {
  return static_cast<int64_t>(Mix(seed ^ 0x1ABE1ull * kGolden ^ Mix(sample)) % 1000);
}

}  // namespace dlio::format_internal

#include <algorithm>
#include <vector>

namespace dlio::format_internal {

Status ForEachDataChunk(const FileSpec& spec, size_t chunk,
                        const std::function<Status(const uint8_t*, size_t)>& sink) {
  return ForEachDataChunkOf(spec, 0, spec.sample_sizes.size(), chunk, sink);
}

Status ForEachDataChunkOf(const FileSpec& spec, uint64_t first, uint64_t last, size_t chunk,
                          const std::function<Status(const uint8_t*, size_t)>& sink) {
  last = std::min<uint64_t>(last, spec.sample_sizes.size());
  uint64_t total = 0;
  for (uint64_t i = first; i < last; ++i) total += spec.sample_sizes[i];
  std::vector<uint8_t> buf(
      static_cast<size_t>(std::min<uint64_t>(chunk, std::max<uint64_t>(total, 1))));
  size_t fill = 0;
  for (uint64_t i = first; i < last; ++i) {
    const uint64_t size = spec.sample_sizes[i];
    for (uint64_t done = 0; done < size;) {
      const size_t take = static_cast<size_t>(std::min<uint64_t>(size - done, buf.size() - fill));
      FillSampleBytes(spec.seed, i, done, buf.data() + fill, take);
      fill += take;
      done += take;
      if (fill == buf.size()) {
        DLIO_RETURN_NOT_OK(sink(buf.data(), fill));
        fill = 0;
      }
    }
  }
  if (fill > 0) DLIO_RETURN_NOT_OK(sink(buf.data(), fill));
  return Status::OK();
}

}  // namespace dlio::format_internal
