// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of TFRecord framing, and
// TensorFlow's masking of stored CRCs. Three implementations with one answer: portable
// slicing-by-8 tables; the SSE4.2 crc32 instruction (three interleaved streams); and, for
// buffers of 256 bytes and more, folding with carry-less multiplication on 512-bit registers
// (AVX-512 VPCLMULQDQ), about three times the crc32 instruction's rate. Crc32cExtend uses the
// best the CPU has (checked at run time). Safe for concurrent use (no state).
#pragma once

#include <cstddef>
#include <cstdint>

namespace dlio::format_internal {

// CRC-32C of `data` appended to a message whose CRC-32C is `crc` (0 for a fresh message):
// Crc32cExtend(Crc32cExtend(0, a), b) == Crc32c of a followed by b.
uint32_t Crc32cExtend(uint32_t crc, const uint8_t* data, size_t n);
inline uint32_t Crc32c(const uint8_t* data, size_t n) { return Crc32cExtend(0, data, n); }

// The implementations, callable directly so tests and benchmarks can compare them.
uint32_t Crc32cExtendPortable(uint32_t crc, const uint8_t* data, size_t n);
// The crc32 instruction; falls back to the portable code when Crc32cHardwareAvailable() is
// false.
uint32_t Crc32cExtendHardware(uint32_t crc, const uint8_t* data, size_t n);
bool Crc32cHardwareAvailable();
// Folding for the whole 256-byte blocks, the crc32 instruction for the rest; falls back to
// Crc32cExtendHardware when Crc32cFoldingAvailable() is false.
uint32_t Crc32cExtendFolding(uint32_t crc, const uint8_t* data, size_t n);
bool Crc32cFoldingAvailable();

// TensorFlow stores masked CRCs, because a CRC of data that embeds CRCs is weak.
inline uint32_t MaskCrc32c(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }
inline uint32_t UnmaskCrc32c(uint32_t masked) {
  const uint32_t rot = masked - 0xa282ead8u;
  return (rot >> 17) | (rot << 15);
}

}  // namespace dlio::format_internal
