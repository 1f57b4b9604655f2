#include "format/tfrecord/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <nmmintrin.h>
#define DLIO_CRC32C_X86 1
#endif

namespace dlio::format_internal {
namespace {

constexpr uint32_t kPoly = 0x82F63B78u;  // reflected Castagnoli polynomial

// All tables are computed at compile time: no run-time initialisation, no mutable state.
using Table = std::array<std::array<uint32_t, 256>, 8>;

constexpr Table MakeSlicingTables() {
  Table t{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t c = b;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kPoly : c >> 1;
    t[0][b] = c;
  }
  for (int k = 1; k < 8; ++k) {
    for (uint32_t b = 0; b < 256; ++b) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xff];
  }
  return t;
}
constexpr Table kSlicing = MakeSlicingTables();

inline uint64_t LoadLe64(const uint8_t* p) {
  uint64_t w;
  std::memcpy(&w, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  w = __builtin_bswap64(w);
#endif
  return w;
}

// The CRC register update over `data` (no pre/post inversion).
uint32_t PortableRegister(uint32_t r, const uint8_t* p, size_t n) {
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    r = kSlicing[0][(r ^ *p++) & 0xff] ^ (r >> 8);
    --n;
  }
  for (; n >= 8; n -= 8, p += 8) {
    const uint64_t w = LoadLe64(p);
    const uint32_t lo = static_cast<uint32_t>(w) ^ r, hi = static_cast<uint32_t>(w >> 32);
    r = kSlicing[7][lo & 0xff] ^ kSlicing[6][(lo >> 8) & 0xff] ^ kSlicing[5][(lo >> 16) & 0xff] ^
        kSlicing[4][lo >> 24] ^ kSlicing[3][hi & 0xff] ^ kSlicing[2][(hi >> 8) & 0xff] ^
        kSlicing[1][(hi >> 16) & 0xff] ^ kSlicing[0][hi >> 24];
  }
  while (n-- > 0) r = kSlicing[0][(r ^ *p++) & 0xff] ^ (r >> 8);
  return r;
}

#ifdef DLIO_CRC32C_X86

// Polynomial arithmetic modulo P in the reflected representation (bit 31 is x^0), to combine
// the registers of independent streams: register(r, A || B) = r_A * x^(8|B|) + register(0, B).
constexpr uint32_t MulModP(uint32_t a, uint32_t b) {
  uint32_t p = 0;
  for (uint32_t m = 1u << 31; m != 0; m >>= 1) {
    if (a & m) p ^= b;
    b = (b & 1) ? (b >> 1) ^ kPoly : b >> 1;
  }
  return p;
}

constexpr uint32_t XPow8nModP(uint64_t n) {     // x^(8n) mod P
  uint32_t result = 1u << 31, base = 1u << 30;  // 1 and x
  for (uint64_t e = 8 * n; e != 0; e >>= 1) {
    if (e & 1) result = MulModP(result, base);
    base = MulModP(base, base);
  }
  return result;
}

// Tables that multiply a register by x^(8n) for one fixed n, a byte of the register at a time.
using ShiftTable = std::array<std::array<uint32_t, 256>, 4>;
constexpr ShiftTable MakeShiftTable(uint64_t n) {
  ShiftTable t{};
  const uint32_t xn = XPow8nModP(n);
  for (int k = 0; k < 4; ++k) {
    for (uint32_t b = 0; b < 256; ++b) t[k][b] = MulModP(xn, b << (8 * k));
  }
  return t;
}

// Each step hashes three streams of kLong (then kShort) bytes at once: the crc32 instruction
// has a latency of 3 cycles and a throughput of 1, so one stream would leave 2/3 of it idle.
constexpr size_t kLong = 8192, kShort = 256;
constexpr ShiftTable kShiftLong = MakeShiftTable(kLong);
constexpr ShiftTable kShiftShort = MakeShiftTable(kShort);

inline uint32_t Shift(const ShiftTable& t, uint32_t c) {
  return t[0][c & 0xff] ^ t[1][(c >> 8) & 0xff] ^ t[2][(c >> 16) & 0xff] ^ t[3][c >> 24];
}

__attribute__((target("sse4.2"))) uint32_t HardwareRegister(uint32_t r, const uint8_t* p,
                                                            size_t n) {
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    r = _mm_crc32_u8(r, *p++);
    --n;
  }
  uint64_t c0 = r;
  for (const size_t block : {kLong, kShort}) {
    const ShiftTable& shift = block == kLong ? kShiftLong : kShiftShort;
    while (n >= 3 * block) {
      uint64_t c1 = 0, c2 = 0;
      const uint8_t* end = p + block;
      for (; p < end; p += 8) {
        c0 = _mm_crc32_u64(c0, LoadLe64(p));
        c1 = _mm_crc32_u64(c1, LoadLe64(p + block));
        c2 = _mm_crc32_u64(c2, LoadLe64(p + 2 * block));
      }
      c0 = Shift(shift, static_cast<uint32_t>(c0)) ^ c1;
      c0 = Shift(shift, static_cast<uint32_t>(c0)) ^ c2;
      p += 2 * block;
      n -= 3 * block;
    }
  }
  for (; n >= 8; n -= 8, p += 8) c0 = _mm_crc32_u64(c0, LoadLe64(p));
  r = static_cast<uint32_t>(c0);
  while (n-- > 0) r = _mm_crc32_u8(r, *p++);
  return r;
}

#endif  // DLIO_CRC32C_X86

}  // namespace

uint32_t Crc32cExtendPortable(uint32_t crc, const uint8_t* data, size_t n) {
  return ~PortableRegister(~crc, data, n);
}

bool Crc32cHardwareAvailable() {
#ifdef DLIO_CRC32C_X86
  // Immutable once initialised: the CPU does not change under us.
  static const bool available = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse4.2") != 0;
  }();
  return available;
#else
  return false;
#endif
}

uint32_t Crc32cExtendHardware(uint32_t crc, const uint8_t* data, size_t n) {
#ifdef DLIO_CRC32C_X86
  if (Crc32cHardwareAvailable()) return ~HardwareRegister(~crc, data, n);
#endif
  return Crc32cExtendPortable(crc, data, n);
}

uint32_t Crc32cExtend(uint32_t crc, const uint8_t* data, size_t n) {
  return Crc32cExtendHardware(crc, data, n);
}

}  // namespace dlio::format_internal
