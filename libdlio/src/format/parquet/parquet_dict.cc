#include "format/parquet/parquet_dict.h"

#include "format/io_util.h"

namespace dlio::format_internal::parquet {
namespace {

constexpr uint64_t kMaxLiteralValues = 512;  // Arrow's MAX_VALUES_PER_LITERAL_RUN

void PutUleb(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// Equal values from values[i] on.
uint64_t RunLength(const std::vector<uint32_t>& values, uint64_t i) {
  uint64_t j = i + 1;
  while (j < values.size() && values[j] == values[i]) ++j;
  return j - i;
}

// A bit-packed literal run of values [begin, end), padded to a multiple of 8 with zeros.
void PutLiteral(const std::vector<uint32_t>& values, uint64_t begin, uint64_t end, int bit_width,
                std::string* out) {
  if (begin == end) return;
  const uint64_t groups = (end - begin + 7) / 8;
  PutUleb(out, groups << 1 | 1);
  uint64_t acc = 0;
  int bits = 0;
  for (uint64_t i = begin; i < begin + groups * 8; ++i) {
    acc |= static_cast<uint64_t>(i < end ? values[i] : 0) << bits;
    bits += bit_width;
    while (bits >= 8) {
      out->push_back(static_cast<char>(acc & 0xff));
      acc >>= 8;
      bits -= 8;
    }
  }
}

void PutRepeated(uint32_t value, uint64_t count, int bit_width, std::string* out) {
  PutUleb(out, count << 1);
  for (int b = 0; b < (bit_width + 7) / 8; ++b) out->push_back(static_cast<char>(value >> (8 * b)));
}

}  // namespace

int IndexBitWidth(uint64_t entries) {
  if (entries <= 1) return static_cast<int>(entries);
  int bits = 0;
  while ((uint64_t{1} << bits) < entries) ++bits;
  return bits;
}

void EncodeRleHybrid(const std::vector<uint32_t>& values, int bit_width, std::string* out) {
  uint64_t literal = 0;  // where the pending literal stretch starts
  uint64_t i = 0;
  while (i < values.size()) {
    if ((i - literal) % 8 == 0) {
      const uint64_t run = RunLength(values, i);
      if (run >= 8) {
        PutLiteral(values, literal, i, bit_width, out);
        PutRepeated(values[i], run, bit_width, out);
        i += run;
        literal = i;
        continue;
      }
    }
    ++i;
    if (i - literal == kMaxLiteralValues) {
      PutLiteral(values, literal, i, bit_width, out);
      literal = i;
    }
  }
  PutLiteral(values, literal, values.size(), bit_width, out);
}

uint64_t IndexPageBound(uint64_t n, int bit_width) {
  const uint64_t groups = (n + 7) / 8;
  return 1 + groups * static_cast<uint64_t>(bit_width) + groups;
}

uint32_t DictionaryBuilder::Put(const std::string& value) {
  auto [it, added] = index_.emplace(value, static_cast<uint32_t>(order_.size()));
  if (added) {
    order_.push_back(&it->first);
    plain_bytes_ += Cost(value.size());
  }
  return it->second;
}

std::string DictionaryBuilder::PlainPage() const {
  std::string out;
  out.reserve(plain_bytes_);
  for (const std::string* v : order_) {
    if (length_prefixed_) PutLe32(&out, static_cast<uint32_t>(v->size()));
    out.append(*v);
  }
  return out;
}

}  // namespace dlio::format_internal::parquet
