// The bytes our writers put in each sample: a counter-based PRNG stream keyed by (seed, sample),
// so any byte range of any sample can be regenerated independently (tests compare against it,
// the writers fill 4 MiB chunks without keeping state between them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "dlio/format.h"
#include "dlio/status.h"

namespace dlio::format_internal {

// Writes bytes [offset, offset + n) of sample `sample` of a file written with `seed` into dst.
// One splitmix64 step per 8 bytes (~8 GB/s on one core).
void FillSampleBytes(uint64_t seed, uint64_t sample, uint64_t offset, uint8_t* dst, size_t n);

// Values [first, first + n) of the float32 row our csv writer stores for `sample`: value k is
// bytes [4k, 4k + 4) of FillSampleBytes read as a little-endian uint32, top 24 bits scaled to
// [0, 1), so every value is exactly representable and prints in at most 9 significant digits.
void FillSampleFloats(uint64_t seed, uint64_t sample, uint64_t first, float* dst, size_t n);

// The next value of a splitmix64 sequence whose state is *state (advanced).
uint64_t SplitMix64(uint64_t* state);

// A standard normal draw by Box-Muller on SplitMix64, so draws (sample sizes, compression ratios)
// are identical across standard libraries (std::normal_distribution is implementation-defined).
double StandardNormal(uint64_t* state);

// The int64 label our npz writer stores for `sample` (0..999).
int64_t SampleLabel(uint64_t seed, uint64_t sample);

// Hands the concatenated samples of `spec` to `sink` in pieces of at most `chunk` bytes (one
// buffer allocated per call, reused for every piece).
Status ForEachDataChunk(const FileSpec& spec, size_t chunk,
                        const std::function<Status(const uint8_t*, size_t)>& sink);
// The same for samples [first, last) only: their bytes as they lie in the concatenation (a rank's
// share of a shared file).
Status ForEachDataChunkOf(const FileSpec& spec, uint64_t first, uint64_t last, size_t chunk,
                          const std::function<Status(const uint8_t*, size_t)>& sink);

}  // namespace dlio::format_internal
