// The DELTA_* encodings of parquet-format Encodings.md: DELTA_BINARY_PACKED (a header, then blocks
// of a min delta, one bit width per miniblock and the miniblocks' bit-packed deltas),
// DELTA_LENGTH_BYTE_ARRAY (lengths delta-packed, then the values back to back) and
// DELTA_BYTE_ARRAY (prefix lengths delta-packed, then the suffixes as DELTA_LENGTH_BYTE_ARRAY).
#include <cstring>

#include "format/parquet/parquet_values.h"

namespace dlio::format_internal::parquet {
namespace {

// A ULEB128 integer at *p (at most 10 bytes); false when it runs past `end` or is longer.
bool ReadUleb(const uint8_t** p, const uint8_t* end, uint64_t* v) {
  *v = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (*p >= end) return false;
    const uint8_t b = *(*p)++;
    *v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return true;
  }
  return false;
}

uint64_t Unzigzag(uint64_t v) { return (v >> 1) ^ (~(v & 1) + 1); }

// Value i of `bw`-bit values packed LSB first from p; reads only the bytes holding its bits.
uint64_t UnpackBits(const uint8_t* p, uint64_t i, int bw) {
  if (bw == 0) return 0;
  const uint64_t bit = i * static_cast<uint64_t>(bw);
  const uint8_t* q = p + bit / 8;
  const int shift = static_cast<int>(bit % 8);
  const int bytes = (shift + bw + 7) / 8;  // 1 to 9
  uint64_t v = 0;
  for (int k = 0; k < bytes && k < 8; ++k) v |= static_cast<uint64_t>(q[k]) << (8 * k);
  v >>= shift;
  if (bytes == 9) v |= static_cast<uint64_t>(q[8]) << (64 - shift);
  return bw == 64 ? v : v & ((uint64_t{1} << bw) - 1);
}

// "DELTA_BINARY_PACKED <what> at value byte <at>".
Status DeltaError(const ValueSite& site, const std::string& what, const uint8_t* begin,
                  const uint8_t* at) {
  return site.Corrupt("DELTA_BINARY_PACKED " + what + " at value byte " +
                      std::to_string(at - begin));
}

// The header's four numbers, checked as Encodings.md defines them.
struct DeltaHeader {
  uint64_t block = 0, miniblocks = 0, total = 0, first = 0;
};

Result<DeltaHeader> ReadDeltaHeader(const uint8_t* begin, const uint8_t** p, const uint8_t* end,
                                    uint64_t count, const ValueSite& site) {
  DeltaHeader h;
  if (!ReadUleb(p, end, &h.block) || !ReadUleb(p, end, &h.miniblocks) ||
      !ReadUleb(p, end, &h.total) || !ReadUleb(p, end, &h.first)) {
    return DeltaError(site, "header truncated", begin, *p);
  }
  h.first = Unzigzag(h.first);
  if (h.block == 0 || h.block % 128 != 0) {
    return DeltaError(site, "block size " + std::to_string(h.block) + " (not a multiple of 128)",
                      begin, begin);
  }
  if (h.miniblocks == 0 || h.block % h.miniblocks != 0 || (h.block / h.miniblocks) % 32 != 0) {
    return DeltaError(site,
                      std::to_string(h.miniblocks) + " miniblocks in a block of " +
                          std::to_string(h.block) + " (not a multiple of 32 values each)",
                      begin, begin);
  }
  if (h.total != count) {
    return DeltaError(site,
                      "header counts " + std::to_string(h.total) + " values, the page has " +
                          std::to_string(count),
                      begin, begin);
  }
  return h;
}

// Lengths (INT32 delta-packed) as non-negative numbers: Corruption naming `what` otherwise.
Status CheckLengths(const std::vector<uint64_t>& v, const char* what, const ValueSite& site) {
  for (size_t i = 0; i < v.size(); ++i) {
    if ((v[i] & 0x80000000u) != 0) {
      return site.Corrupt(std::string(what) + " of value " + std::to_string(i) + " is negative (" +
                          std::to_string(static_cast<int32_t>(v[i])) + ")");
    }
  }
  return Status::OK();
}

}  // namespace

Result<uint64_t> DecodeDeltaBinaryPacked(const uint8_t* begin, const uint8_t* end, uint64_t count,
                                         int bits, std::vector<uint64_t>* out,
                                         const ValueSite& site) {
  const uint8_t* p = begin;
  DLIO_ASSIGN_OR_RETURN(DeltaHeader h, ReadDeltaHeader(begin, &p, end, count, site));
  out->clear();
  if (count == 0) return static_cast<uint64_t>(p - begin);
  const uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  const uint64_t per_miniblock = h.block / h.miniblocks;
  uint64_t last = h.first;
  out->push_back(last & mask);
  while (out->size() < count) {
    uint64_t min_delta = 0;
    if (!ReadUleb(&p, end, &min_delta)) return DeltaError(site, "min delta truncated", begin, p);
    min_delta = Unzigzag(min_delta);
    if (static_cast<uint64_t>(end - p) < h.miniblocks) {
      return DeltaError(site, std::to_string(h.miniblocks) + " bit widths past the end", begin, p);
    }
    const uint8_t* widths = p;
    p += h.miniblocks;
    for (uint64_t m = 0; m < h.miniblocks && out->size() < count; ++m) {
      const int bw = widths[m];
      if (bw > bits) {
        return DeltaError(site,
                          "miniblock bit width " + std::to_string(bw) + " exceeds the type's " +
                              std::to_string(bits) + " bits",
                          begin, widths + m);
      }
      if (bw != 0 && per_miniblock / 8 > static_cast<uint64_t>(end - p) / bw) {
        return DeltaError(site,
                          "miniblock of " + std::to_string(per_miniblock) + " values of " +
                              std::to_string(bw) + " bits past the end",
                          begin, p);
      }
      const uint64_t n = std::min(per_miniblock, count - out->size());
      for (uint64_t i = 0; i < n; ++i) {
        last += min_delta + UnpackBits(p, i, bw);  // wraps, as the encoding's arithmetic does
        out->push_back(last & mask);
      }
      p += per_miniblock / 8 * static_cast<uint64_t>(bw);
    }
  }
  return static_cast<uint64_t>(p - begin);
}

Result<uint64_t> DecodeDeltaLengthByteArray(const uint8_t* begin, const uint8_t* end,
                                            uint64_t count, std::vector<uint64_t>* offs,
                                            const ValueSite& site) {
  std::vector<uint64_t> lengths;
  DLIO_ASSIGN_OR_RETURN(uint64_t pos,
                        DecodeDeltaBinaryPacked(begin, end, count, 32, &lengths, site));
  DLIO_RETURN_NOT_OK(CheckLengths(lengths, "DELTA_LENGTH_BYTE_ARRAY length", site));
  offs->clear();
  offs->reserve(2 * lengths.size());
  const uint64_t size = static_cast<uint64_t>(end - begin);
  for (size_t i = 0; i < lengths.size(); ++i) {
    if (lengths[i] > size - pos) {
      return site.Corrupt("DELTA_LENGTH_BYTE_ARRAY value " + std::to_string(i) + " of " +
                          std::to_string(lengths[i]) + " bytes past the end at value byte " +
                          std::to_string(pos));
    }
    offs->push_back(pos);
    pos += lengths[i];
    offs->push_back(pos);
  }
  return pos;
}

Status DecodeDeltaByteArray(const uint8_t* begin, const uint8_t* end, uint64_t count,
                            uint64_t fixed_width, uint64_t max_bytes, std::vector<uint8_t>* bytes,
                            std::vector<uint64_t>* offs, const ValueSite& site) {
  std::vector<uint64_t> prefixes, suffixes;
  DLIO_ASSIGN_OR_RETURN(uint64_t used,
                        DecodeDeltaBinaryPacked(begin, end, count, 32, &prefixes, site));
  DLIO_RETURN_NOT_OK(CheckLengths(prefixes, "DELTA_BYTE_ARRAY prefix length", site));
  DLIO_RETURN_NOT_OK(
      DecodeDeltaLengthByteArray(begin + used, end, count, &suffixes, site).status());
  // Sizes first: each prefix within the previous value, the total within max_bytes.
  uint64_t total = 0, previous = 0;
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t length = prefixes[i] + (suffixes[2 * i + 1] - suffixes[2 * i]);
    if (prefixes[i] > previous) {
      return site.Corrupt("DELTA_BYTE_ARRAY value " + std::to_string(i) + "'s prefix of " +
                          std::to_string(prefixes[i]) + " bytes is longer than the previous " +
                          "value's " + std::to_string(previous));
    }
    if (fixed_width != 0 && length != fixed_width) {
      return site.Corrupt("DELTA_BYTE_ARRAY value " + std::to_string(i) + " of " +
                          std::to_string(length) + " bytes in a column of " +
                          std::to_string(fixed_width) + "-byte values");
    }
    if (length > max_bytes - total) {
      return site.Corrupt("DELTA_BYTE_ARRAY values exceed reader.max_decoded_bytes (" +
                          std::to_string(max_bytes) + ") at value " + std::to_string(i));
    }
    total += length;
    previous = length;
  }
  bytes->resize(total);
  offs->clear();
  offs->reserve(2 * count);
  const uint8_t* suffix_base = begin + used;
  uint64_t at = 0, prev_at = 0;
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t suffix = suffixes[2 * i + 1] - suffixes[2 * i];
    if (prefixes[i] != 0) std::memcpy(bytes->data() + at, bytes->data() + prev_at, prefixes[i]);
    if (suffix != 0) {
      std::memcpy(bytes->data() + at + prefixes[i], suffix_base + suffixes[2 * i], suffix);
    }
    offs->push_back(at);
    prev_at = at;
    at += prefixes[i] + suffix;
    offs->push_back(at);
  }
  return Status::OK();
}

}  // namespace dlio::format_internal::parquet
