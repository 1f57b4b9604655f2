// The DELTA_* encodings of parquet-format Encodings.md: DELTA_BINARY_PACKED (a header, then blocks
// of a min delta, one bit width per miniblock and the miniblocks' bit-packed deltas),
// DELTA_LENGTH_BYTE_ARRAY (lengths delta-packed, then the values back to back) and
// DELTA_BYTE_ARRAY (prefix lengths delta-packed, then the suffixes as DELTA_LENGTH_BYTE_ARRAY).
#include "format/parquet/parquet_values.h"

namespace dlio::format_internal::parquet {
namespace {

// A ULEB128 integer at *p (at most 10 bytes); false when it runs past `end` or is longer.
bool ReadUleb(const uint8_t** p, const uint8_t* end, uint64_t* v) {
  *v = 0;
  const uint8_t* q = *p;
  for (int shift = 0; shift < 70; shift += 7) {
    if (q >= end) return false;
    const uint8_t b = *q++;
    *v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      *p = q;
      return true;
    }
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

bool Negative(uint64_t int32_value) { return (int32_value & 0x80000000u) != 0; }

// DELTA_LENGTH_BYTE_ARRAY: the lengths' reader, then the values from where the lengths end.
class DeltaLengthValues final : public ValueReader {
 public:
  explicit DeltaLengthValues(const ValueSite& site) : site_(site) {}

  Status Open(const uint8_t* p, const uint8_t* end, uint64_t count) {
    begin_ = p;
    end_ = end;
    DLIO_RETURN_NOT_OK(lengths_.Open(p, end, count, 32, &site_));
    DLIO_ASSIGN_OR_RETURN(data_, lengths_.End());
    return Status::OK();
  }

  Status Next(const uint8_t** value, uint64_t* size) override {
    uint64_t len = 0;
    DLIO_RETURN_NOT_OK(lengths_.Next(&len));
    if (Negative(len)) {
      return site_.Corrupt("DELTA_LENGTH_BYTE_ARRAY length of value " + std::to_string(i_) +
                           " is negative (" + std::to_string(static_cast<int32_t>(len)) + ")");
    }
    if (len > static_cast<uint64_t>(end_ - data_)) {
      return site_.Corrupt("DELTA_LENGTH_BYTE_ARRAY value " + std::to_string(i_) + " of " +
                           std::to_string(len) + " bytes past the end at value byte " +
                           std::to_string(data_ - begin_));
    }
    *value = data_;
    *size = len;
    data_ += len;
    ++i_;
    return Status::OK();
  }

 private:
  ValueSite site_;
  DeltaReader lengths_;
  const uint8_t *begin_ = nullptr, *data_ = nullptr, *end_ = nullptr;
  uint64_t i_ = 0;
};

// DELTA_BYTE_ARRAY: each value is the previous one's first `prefix` bytes and a suffix. The value
// kept is never longer than the suffixes so far, so within the page's bytes.
class DeltaStringValues final : public ValueReader {
 public:
  DeltaStringValues(const ValueSite& site, uint64_t fixed_width, uint64_t max_bytes)
      : site_(site), suffixes_(site), fixed_(fixed_width), budget_(max_bytes) {}

  Status Open(const uint8_t* p, const uint8_t* end, uint64_t count) {
    DLIO_RETURN_NOT_OK(prefixes_.Open(p, end, count, 32, &site_));
    DLIO_ASSIGN_OR_RETURN(const uint8_t* suffixes, prefixes_.End());
    return suffixes_.Open(suffixes, end, count);
  }

  Status Next(const uint8_t** value, uint64_t* size) override {
    uint64_t prefix = 0, suffix_len = 0;
    const uint8_t* suffix = nullptr;
    DLIO_RETURN_NOT_OK(prefixes_.Next(&prefix));
    DLIO_RETURN_NOT_OK(suffixes_.Next(&suffix, &suffix_len));
    if (prefix > value_.size()) {
      return site_.Corrupt("DELTA_BYTE_ARRAY value " + std::to_string(i_) + "'s prefix of " +
                           std::to_string(static_cast<int32_t>(prefix)) +
                           " bytes is longer than the previous value's " +
                           std::to_string(value_.size()));
    }
    const uint64_t len = prefix + suffix_len;
    if (fixed_ != 0 && len != fixed_) {
      return site_.Corrupt("DELTA_BYTE_ARRAY value " + std::to_string(i_) + " of " +
                           std::to_string(len) + " bytes in a column of " + std::to_string(fixed_) +
                           "-byte values");
    }
    if (len > budget_ - total_) {
      return site_.Corrupt("DELTA_BYTE_ARRAY values exceed reader.max_decoded_bytes (" +
                           std::to_string(budget_) + ") at value " + std::to_string(i_));
    }
    total_ += len;
    value_.resize(prefix);
    value_.insert(value_.end(), suffix, suffix + suffix_len);
    *value = value_.data();
    *size = len;
    ++i_;
    return Status::OK();
  }

 private:
  ValueSite site_;
  DeltaReader prefixes_;
  DeltaLengthValues suffixes_;
  std::vector<uint8_t> value_;  // the previous value
  uint64_t fixed_, budget_, total_ = 0, i_ = 0;
};

}  // namespace

Status DeltaReader::Error(const std::string& what, const uint8_t* at) const {
  return site_->Corrupt("DELTA_BINARY_PACKED " + what + " at value byte " +
                        std::to_string(at - begin_));
}

Status DeltaReader::Open(const uint8_t* p, const uint8_t* end, uint64_t count, int bits,
                         const ValueSite* site) {
  site_ = site;
  begin_ = p_ = p;
  end_ = end;
  count_ = count;
  bits_ = bits;
  mask_ = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  uint64_t block = 0, total = 0;
  if (!ReadUleb(&p_, end, &block) || !ReadUleb(&p_, end, &miniblocks_) ||
      !ReadUleb(&p_, end, &total) || !ReadUleb(&p_, end, &first_)) {
    return Error("header truncated", p_);
  }
  if (block == 0 || block % 128 != 0) {
    return Error("block size " + std::to_string(block) + " (not a multiple of 128)", p);
  }
  if (miniblocks_ == 0 || block % miniblocks_ != 0 || (block / miniblocks_) % 32 != 0) {
    return Error(std::to_string(miniblocks_) + " miniblocks in a block of " +
                     std::to_string(block) + " (not a multiple of 32 values each)",
                 p);
  }
  if (total != count) {
    return Error(
        "header counts " + std::to_string(total) + " values, the page has " + std::to_string(count),
        p);
  }
  first_ = last_ = Unzigzag(first_);
  per_miniblock_ = block / miniblocks_;
  miniblock_ = miniblocks_;  // the first miniblock starts a block
  produced_ = left_ = 0;
  return Status::OK();
}

Status DeltaReader::LoadMiniblock() {
  if (miniblock_ == miniblocks_) {  // a block: its min delta and bit widths
    uint64_t min_delta = 0;
    if (!ReadUleb(&p_, end_, &min_delta)) return Error("min delta truncated", p_);
    min_delta_ = Unzigzag(min_delta);
    if (static_cast<uint64_t>(end_ - p_) < miniblocks_) {
      return Error(std::to_string(miniblocks_) + " bit widths past the end", p_);
    }
    widths_ = p_;
    p_ += miniblocks_;
    miniblock_ = 0;
  }
  width_ = widths_[miniblock_];
  if (width_ > bits_) {
    return Error("miniblock bit width " + std::to_string(width_) + " exceeds the type's " +
                     std::to_string(bits_) + " bits",
                 widths_ + miniblock_);
  }
  if (width_ != 0 && per_miniblock_ / 8 > static_cast<uint64_t>(end_ - p_) / width_) {
    return Error("miniblock of " + std::to_string(per_miniblock_) + " values of " +
                     std::to_string(width_) + " bits past the end",
                 p_);
  }
  data_ = p_;
  p_ += per_miniblock_ / 8 * static_cast<uint64_t>(width_);
  ++miniblock_;
  left_ = per_miniblock_;
  index_ = 0;
  return Status::OK();
}

Status DeltaReader::Next(uint64_t* value) {
  if (produced_ == count_) return Error("value past the header's count", p_);
  if (produced_++ == 0) {
    *value = first_ & mask_;
    return Status::OK();
  }
  if (left_ == 0) DLIO_RETURN_NOT_OK(LoadMiniblock());
  last_ += min_delta_ + UnpackBits(data_, index_++, width_);  // wraps, as the encoding does
  --left_;
  *value = last_ & mask_;
  return Status::OK();
}

Result<const uint8_t*> DeltaReader::End() const {
  DeltaReader r = *this;
  uint64_t remaining = count_ - produced_;
  if (produced_ == 0 && remaining != 0) --remaining;  // the header's first value
  remaining -= std::min(remaining, r.left_);
  while (remaining != 0) {
    DLIO_RETURN_NOT_OK(r.LoadMiniblock());
    remaining -= std::min(remaining, r.per_miniblock_);
  }
  return r.p_;
}

Result<std::unique_ptr<ValueReader>> OpenDeltaLengths(const uint8_t* p, const uint8_t* end,
                                                      uint64_t count, const ValueSite& site) {
  auto r = std::make_unique<DeltaLengthValues>(site);
  DLIO_RETURN_NOT_OK(r->Open(p, end, count));
  return std::unique_ptr<ValueReader>(std::move(r));
}

Result<std::unique_ptr<ValueReader>> OpenDeltaStrings(const uint8_t* p, const uint8_t* end,
                                                      uint64_t count, uint64_t fixed_width,
                                                      uint64_t max_bytes, const ValueSite& site) {
  auto r = std::make_unique<DeltaStringValues>(site, fixed_width, max_bytes);
  DLIO_RETURN_NOT_OK(r->Open(p, end, count));
  return std::unique_ptr<ValueReader>(std::move(r));
}

}  // namespace dlio::format_internal::parquet
