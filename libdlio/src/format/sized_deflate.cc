#include "format/sized_deflate.h"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace dlio::format_internal {
namespace {

constexpr uint64_t kMaxStored = 65535;  // bytes of one stored block
constexpr uint64_t kMaxMatch = 258;
constexpr uint32_t kDistanceBits = 5;  // fixed code of distance 1 (code 0, no extra bits)

// Lengths 3..258: codes 257..285 (RFC 1951 3.2.5), their base lengths and extra bits.
constexpr std::array<uint32_t, 29> kLengthBase = {3,  4,  5,  6,   7,   8,   9,   10,  11, 13,
                                                  15, 17, 19, 23,  27,  31,  35,  43,  51, 59,
                                                  67, 83, 99, 115, 131, 163, 195, 227, 258};
constexpr std::array<uint32_t, 29> kLengthExtra = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                                   2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};

// Index into kLengthBase of a match of `len` (3..258); 258 is code 285.
size_t LengthIndex(uint64_t len) {
  if (len == kMaxMatch) return kLengthBase.size() - 1;
  size_t i = 0;
  while (i + 2 < kLengthBase.size() && kLengthBase[i + 1] <= len) ++i;
  return i;
}

// Bits of the fixed-Huffman literal/length code of `symbol` (0..287).
uint32_t FixedCodeBits(uint32_t symbol) {
  if (symbol <= 143) return 8;
  if (symbol <= 255) return 9;
  if (symbol <= 279) return 7;
  return 8;
}

uint32_t MatchBits(uint64_t len) {
  const size_t i = LengthIndex(len);
  return FixedCodeBits(257 + static_cast<uint32_t>(i)) + kLengthExtra[i] + kDistanceBits;
}

// The matches that copy `left` zeros after a first literal zero: 258s, then the rest; a rest of 1
// or 2 (no match that short) takes 3 from the last 258 (256 or 257, then 3), or stays literals
// when there is no 258 to take from. Calls emit(length) per match and literal() per literal.
template <typename Match, typename Literal>
void PlanZeroRun(uint64_t left, Match&& match, Literal&& literal) {
  uint64_t full = left / kMaxMatch;
  const uint64_t rest = left % kMaxMatch;
  if ((rest == 1 || rest == 2) && full >= 1) {
    for (uint64_t k = 0; k + 1 < full; ++k) match(kMaxMatch);
    match(kMaxMatch + rest - 3);
    match(3);
    return;
  }
  for (uint64_t k = 0; k < full; ++k) match(kMaxMatch);
  if (rest >= 3) {
    match(rest);
  } else {
    for (uint64_t k = 0; k < rest; ++k) literal();
  }
}

// Bits of the final fixed-Huffman block of `zeros` (> 0) zeros: its header, a literal zero, the
// matches, end of block.
uint64_t ZeroBlockBits(uint64_t zeros) {
  const uint64_t full = (zeros - 1) / kMaxMatch;
  const uint64_t rest = (zeros - 1) % kMaxMatch;
  uint64_t bits = 3 + FixedCodeBits(0) + FixedCodeBits(256);
  if ((rest == 1 || rest == 2) && full >= 1) {
    return bits + (full - 1) * MatchBits(kMaxMatch) + MatchBits(kMaxMatch + rest - 3) +
           MatchBits(3);
  }
  bits += full * MatchBits(kMaxMatch);
  return bits + (rest >= 3 ? MatchBits(rest) : rest * FixedCodeBits(0));
}

uint64_t StoredBytes(uint64_t literals) {
  return literals + 5 * ((literals + kMaxStored - 1) / kMaxStored);
}

// Bits into bytes, least significant first (RFC 1951 3.1.1).
class BitWriter {
 public:
  explicit BitWriter(std::vector<uint8_t>* out) : out_(out) {}
  void Bits(uint32_t value, uint32_t n) {  // `n` bits of `value`, low bit first
    for (uint32_t i = 0; i < n; ++i) Bit((value >> i) & 1);
  }
  void Code(uint32_t code, uint32_t n) {  // a Huffman code, high bit first
    for (uint32_t i = n; i-- > 0;) Bit((code >> i) & 1);
  }
  void Flush() {
    if (used_ > 0) out_->push_back(byte_);
    byte_ = 0;
    used_ = 0;
  }

 private:
  void Bit(uint32_t b) {
    byte_ |= static_cast<uint8_t>(b << used_);
    if (++used_ == 8) Flush();
  }
  std::vector<uint8_t>* out_;
  uint8_t byte_ = 0;
  uint32_t used_ = 0;
};

void FixedSymbol(BitWriter* w, uint32_t symbol) {
  if (symbol <= 143) return w->Code(0x30 + symbol, 8);
  if (symbol <= 255) return w->Code(0x190 + symbol - 144, 9);
  if (symbol <= 279) return w->Code(symbol - 256, 7);
  w->Code(0xC0 + symbol - 280, 8);
}

void AppendZeroBlock(uint64_t zeros, std::vector<uint8_t>* out) {
  BitWriter w(out);
  w.Bits(1, 1);  // BFINAL
  w.Bits(1, 2);  // BTYPE 01: fixed Huffman codes
  FixedSymbol(&w, 0);
  PlanZeroRun(
      zeros - 1,
      [&w](uint64_t len) {
        const size_t i = LengthIndex(len);
        FixedSymbol(&w, 257 + static_cast<uint32_t>(i));
        w.Bits(static_cast<uint32_t>(len - kLengthBase[i]), kLengthExtra[i]);
        w.Code(0, kDistanceBits);
      },
      [&w] { FixedSymbol(&w, 0); });
  FixedSymbol(&w, 256);
  w.Flush();
}

void AppendStored(const uint8_t* data, uint64_t n, bool final, std::vector<uint8_t>* out) {
  out->push_back(final ? 1 : 0);  // BFINAL, BTYPE 00, then padding to the byte
  const auto len = static_cast<uint16_t>(n);
  const auto nlen = static_cast<uint16_t>(~len);
  out->insert(out->end(), {static_cast<uint8_t>(len), static_cast<uint8_t>(len >> 8),
                           static_cast<uint8_t>(nlen), static_cast<uint8_t>(nlen >> 8)});
  out->insert(out->end(), data, data + n);
}

uint32_t Adler(const uint8_t* data, uint64_t literals, uint64_t zeros) {
  static const std::array<uint8_t, 65536> kZeros{};
  uLong a = adler32(0L, Z_NULL, 0);
  for (uint64_t done = 0; done < literals;) {
    const auto n = static_cast<uInt>(std::min<uint64_t>(literals - done, 1u << 30));
    a = adler32(a, data + done, n);
    done += n;
  }
  for (uint64_t done = 0; done < zeros;) {
    const auto n = static_cast<uInt>(std::min<uint64_t>(zeros - done, kZeros.size()));
    a = adler32(a, kZeros.data(), n);
    done += n;
  }
  return static_cast<uint32_t>(a);
}

}  // namespace

uint64_t SizedDeflateBytes(uint64_t literals, uint64_t zeros) {
  const uint64_t n = StoredBytes(literals);
  if (zeros > 0) return n + (ZeroBlockBits(zeros) + 7) / 8;
  return literals == 0 ? 5 : n;  // nothing at all: one empty final stored block
}

uint64_t SizedZlibBytes(uint64_t literals, uint64_t zeros) {
  return 2 + SizedDeflateBytes(literals, zeros) + 4;  // zlib header and Adler-32 trailer
}

uint64_t LiteralsForDeflateBytes(uint64_t total, uint64_t target) {
  if (target <= SizedDeflateBytes(0, total)) return 0;
  if (target >= SizedDeflateBytes(total, 0)) return total;
  // A literal costs a byte (and 5 per 65535); a zero in a 258-match about 13 / 258 / 8 of one.
  const double zero_cost = 13.0 / (8.0 * kMaxMatch);
  const double per_literal = 1.0 + 5.0 / kMaxStored - zero_cost;
  const double base = static_cast<double>(SizedDeflateBytes(0, total));
  const auto guess =
      static_cast<int64_t>(std::llround((static_cast<double>(target) - base - 5.0) / per_literal));
  constexpr int64_t kWindow = 4096;
  const int64_t lo = std::max<int64_t>(0, guess - kWindow);
  const int64_t hi = std::min<int64_t>(static_cast<int64_t>(total), guess + kWindow);
  uint64_t best = static_cast<uint64_t>(std::clamp<int64_t>(guess, 0, static_cast<int64_t>(total)));
  uint64_t best_off = UINT64_MAX;
  for (int64_t r = lo; r <= hi; ++r) {
    const auto lit = static_cast<uint64_t>(r);
    const uint64_t size = SizedDeflateBytes(lit, total - lit);
    const uint64_t off = size > target ? size - target : target - size;
    if (off < best_off) {
      best = lit;
      best_off = off;
      if (off == 0) break;
    }
  }
  return best;
}

uint64_t LiteralsForZlibBytes(uint64_t total, uint64_t target) {
  return LiteralsForDeflateBytes(total, target > 6 ? target - 6 : 0);
}

void SizedDeflateWriter::EmitBlock(std::vector<uint8_t>* out) {
  AppendStored(block_.data(), block_.size(), taken_ == literals_ && zeros_ == 0, out);
  block_.clear();
}

void SizedDeflateWriter::Literals(const uint8_t* data, size_t n, std::vector<uint8_t>* out) {
  while (n > 0) {
    const size_t take = std::min<size_t>(n, kMaxStored - block_.size());
    block_.insert(block_.end(), data, data + take);
    taken_ += take;
    data += take;
    n -= take;
    if (block_.size() == kMaxStored) EmitBlock(out);
  }
}

void SizedDeflateWriter::Finish(std::vector<uint8_t>* out) {
  if (!block_.empty()) EmitBlock(out);
  if (zeros_ > 0) {
    AppendZeroBlock(zeros_, out);
  } else if (literals_ == 0) {
    AppendStored(nullptr, 0, true, out);
  }
}

void AppendSizedZlib(const uint8_t* data, uint64_t literals, uint64_t zeros,
                     std::vector<uint8_t>* out) {
  out->push_back(0x78);  // CMF: deflate, 32 KiB window
  out->push_back(0x01);  // FLG: fastest, no dictionary; (0x78 * 256 + 0x01) % 31 == 0
  SizedDeflateWriter w(literals, zeros);
  w.Literals(data, static_cast<size_t>(literals), out);
  w.Finish(out);
  const uint32_t a = Adler(data, literals, zeros);
  out->insert(out->end(), {static_cast<uint8_t>(a >> 24), static_cast<uint8_t>(a >> 16),
                           static_cast<uint8_t>(a >> 8), static_cast<uint8_t>(a)});
}

}  // namespace dlio::format_internal
