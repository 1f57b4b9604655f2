#include "format/tfrecord/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
// GCC 12's AVX-512 intrinsics pass _mm512_undefined values to builtins, which -Wuninitialized
// reports at their use (GCC bug 105593, fixed in 13).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
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

constexpr uint32_t XPowModP(uint64_t e) {       // x^e mod P
  uint32_t result = 1u << 31, base = 1u << 30;  // 1 and x
  for (; e != 0; e >>= 1) {
    if (e & 1) result = MulModP(result, base);
    base = MulModP(base, base);
  }
  return result;
}
constexpr uint32_t XPow8nModP(uint64_t n) { return XPowModP(8 * n); }

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

// Folding with carry-less multiplication (VPCLMULQDQ on 512-bit registers), the way of Intel's
// "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ": 16 lanes of 16 bytes hold
// 128-bit polynomials congruent (mod P) to the message so far; each step moves every lane
// 256 bytes on (a multiplication by x^2048, as two 64x32-bit carry-less products) and adds
// the next 256 bytes. A lane's bytes in memory order are its coefficients from x^127 down:
// the low qword H (x^127..x^64) and the high qword L (x^63..x^0). Moving the lane by d bytes
// is H * x^(8d+64) + L * x^(8d) mod P, a polynomial of degree < 96. A 64-bit reflected
// operand times a 32-bit constant placed in the high half gives a product one degree short of
// the 128-bit reflected lane (bit k is x^(126-k)), so the constants carry one factor of x
// less: x^(8d+63) and x^(8d-1).
constexpr uint64_t FoldConstant(uint64_t exponent) {
  return static_cast<uint64_t>(XPowModP(exponent)) << 32;
}
// The constants of a d-byte move, as a 128-bit lane's (low, high) qwords.
struct FoldPair {
  uint64_t lo, hi;
};
constexpr FoldPair FoldBy(uint64_t d) {
  return {FoldConstant(8 * d + 63), FoldConstant(8 * d - 1)};
}
constexpr FoldPair kFold256 = FoldBy(256), kFold64 = FoldBy(64), kFold48 = FoldBy(48),
                   kFold32 = FoldBy(32), kFold16 = FoldBy(16);

// Bytes per step: four 512-bit registers. From one block on, folding beats the crc32
// instruction (256 bytes: 17 ns against 42).
constexpr size_t kFoldBlock = 256;

#define DLIO_CRC32C_FOLD_TARGET __attribute__((target("avx512f,avx512vl,vpclmulqdq,pclmul,sse4.2")))

DLIO_CRC32C_FOLD_TARGET inline __m512i FoldLanes(__m512i a, __m512i k, __m512i b) {
  return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(a, k, 0x00),
                                   _mm512_clmulepi64_epi128(a, k, 0x11), b, 0x96);  // a ^ b ^ c
}

DLIO_CRC32C_FOLD_TARGET __m512i Broadcast(FoldPair k) {
  const auto lo = static_cast<long long>(k.lo), hi = static_cast<long long>(k.hi);
  return _mm512_set_epi64(hi, lo, hi, lo, hi, lo, hi, lo);
}

// The register after `n` bytes (a multiple of kFoldBlock, at least one) from register r.
DLIO_CRC32C_FOLD_TARGET uint32_t FoldRegister(uint32_t r, const uint8_t* p, size_t n) {
  __m512i x0 = _mm512_loadu_si512(p), x1 = _mm512_loadu_si512(p + 64),
          x2 = _mm512_loadu_si512(p + 128), x3 = _mm512_loadu_si512(p + 192);
  // The register enters as the message's first 32 bits.
  x0 = _mm512_xor_si512(x0, _mm512_zextsi128_si512(_mm_cvtsi32_si128(static_cast<int>(r))));
  const __m512i k256 = Broadcast(kFold256);
  for (p += kFoldBlock, n -= kFoldBlock; n >= kFoldBlock; p += kFoldBlock, n -= kFoldBlock) {
    x0 = FoldLanes(x0, k256, _mm512_loadu_si512(p));
    x1 = FoldLanes(x1, k256, _mm512_loadu_si512(p + 64));
    x2 = FoldLanes(x2, k256, _mm512_loadu_si512(p + 128));
    x3 = FoldLanes(x3, k256, _mm512_loadu_si512(p + 192));
  }
  const __m512i k64 = Broadcast(kFold64);
  x1 = FoldLanes(x0, k64, x1);
  x2 = FoldLanes(x1, k64, x2);
  x3 = FoldLanes(x2, k64, x3);
  // Lanes 0-2 move 48, 32 and 16 bytes on, to lane 3; lane 3's constants are zero.
  const __m512i k_lanes =
      _mm512_set_epi64(0, 0, static_cast<long long>(kFold16.hi), static_cast<long long>(kFold16.lo),
                       static_cast<long long>(kFold32.hi), static_cast<long long>(kFold32.lo),
                       static_cast<long long>(kFold48.hi), static_cast<long long>(kFold48.lo));
  const __m512i moved = FoldLanes(x3, k_lanes, _mm512_setzero_si512());
  __m128i v =
      _mm_xor_si128(_mm512_extracti32x4_epi32(moved, 0), _mm512_extracti32x4_epi32(moved, 1));
  v = _mm_ternarylogic_epi64(v, _mm512_extracti32x4_epi32(moved, 2),
                             _mm512_extracti32x4_epi32(x3, 3), 0x96);
  // v is congruent to the message (with the register folded in), so hashing its 16 bytes from
  // a zero register gives the message's register.
  uint64_t c = _mm_crc32_u64(0, static_cast<uint64_t>(_mm_cvtsi128_si64(v)));
  c = _mm_crc32_u64(c, static_cast<uint64_t>(_mm_extract_epi64(v, 1)));
  return static_cast<uint32_t>(c);
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

bool Crc32cFoldingAvailable() {
#ifdef DLIO_CRC32C_X86
  static const bool available = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("pclmul") &&
           __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("vpclmulqdq");
  }();
  return available;
#else
  return false;
#endif
}

uint32_t Crc32cExtendFolding(uint32_t crc, const uint8_t* data, size_t n) {
#ifdef DLIO_CRC32C_X86
  if (Crc32cFoldingAvailable() && n >= kFoldBlock) {
    const size_t bulk = n / kFoldBlock * kFoldBlock;
    const uint32_t r = FoldRegister(~crc, data, bulk);
    return ~HardwareRegister(r, data + bulk, n - bulk);
  }
#endif
  return Crc32cExtendHardware(crc, data, n);
}

uint32_t Crc32cExtend(uint32_t crc, const uint8_t* data, size_t n) {
  return Crc32cExtendFolding(crc, data, n);
}

}  // namespace dlio::format_internal
