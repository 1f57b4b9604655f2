#include "format/parquet/parquet_values.h"

#include "format/io_util.h"
#include "format/parquet/parquet_pages.h"

namespace dlio::format_internal::parquet {
namespace {

const char* EncodingName(int32_t e) {
  static const char* const kNames[] = {"PLAIN",
                                       "GROUP_VAR_INT",
                                       "PLAIN_DICTIONARY",
                                       "RLE",
                                       "BIT_PACKED",
                                       "DELTA_BINARY_PACKED",
                                       "DELTA_LENGTH_BYTE_ARRAY",
                                       "DELTA_BYTE_ARRAY",
                                       "RLE_DICTIONARY",
                                       "BYTE_STREAM_SPLIT",
                                       "ALP"};
  return e >= 0 && e <= 10 ? kNames[e] : "unknown";
}

Status NotForType(int32_t encoding, int32_t type, const ValueSite& site) {
  return site.Corrupt(std::string("encoding ") + EncodingName(encoding) +
                      " is not defined for type " + PhysicalTypeName(type));
}

// PLAIN fixed-width values, back to back (their count checked against the page by OpenValues).
class PlainFixedValues final : public ValueReader {
 public:
  PlainFixedValues(const uint8_t* p, uint64_t width) : p_(p), width_(width) {}
  Status Next(const uint8_t** value, uint64_t* size) override {
    *value = p_;
    *size = width_;
    p_ += width_;
    return Status::OK();
  }

 private:
  const uint8_t* p_;
  uint64_t width_;
};

// PLAIN byte_array values: a 4-byte length, then the bytes.
class PlainByteArrayValues final : public ValueReader {
 public:
  PlainByteArrayValues(const uint8_t* p, const uint8_t* end, const ValueSite& site)
      : p_(p), end_(end), site_(site) {}
  Status Next(const uint8_t** value, uint64_t* size) override {
    if (end_ - p_ < 4) return site_.Corrupt("byte_array value past the page end");
    const uint32_t len = Le32(p_);
    p_ += 4;
    if (static_cast<uint64_t>(end_ - p_) < len) {
      return site_.Corrupt("byte_array value of " + std::to_string(len) +
                           " bytes past the page end");
    }
    *value = p_;
    *size = len;
    p_ += len;
    return Status::OK();
  }

 private:
  const uint8_t *p_, *end_;
  ValueSite site_;
};

// BOOLEAN values as bytes: bit-packed (PLAIN, read in place) or RLE (decoded once, a byte each).
class BooleanValues final : public ValueReader {
 public:
  BooleanValues(const uint8_t* bits, std::vector<uint8_t> rle)
      : bits_(bits), rle_(std::move(rle)) {}
  Status Next(const uint8_t** value, uint64_t* size) override {
    byte_ = bits_ != nullptr ? (bits_[i_ / 8] >> (i_ % 8)) & 1 : rle_[i_];
    ++i_;
    *value = &byte_;
    *size = 1;
    return Status::OK();
  }

 private:
  const uint8_t* bits_;
  std::vector<uint8_t> rle_;
  uint64_t i_ = 0;
  uint8_t byte_ = 0;
};

Result<std::unique_ptr<ValueReader>> OpenBooleans(const uint8_t* p, const uint8_t* end,
                                                  uint64_t count, bool rle, const ValueSite& site) {
  const uint64_t size = static_cast<uint64_t>(end - p);
  if (!rle) {
    if ((count + 7) / 8 > size) {
      return site.Corrupt(std::to_string(count) + " bit-packed BOOLEAN values need " +
                          std::to_string((count + 7) / 8) + " bytes, the page has " +
                          std::to_string(size));
    }
    return std::unique_ptr<ValueReader>(std::make_unique<BooleanValues>(p, std::vector<uint8_t>()));
  }
  if (size < 4) return site.Corrupt("RLE BOOLEAN values without their 4-byte length");
  const uint64_t len = Le32(p);
  if (len > size - 4) {
    return site.Corrupt("RLE BOOLEAN values of " + std::to_string(len) +
                        " bytes past the page end");
  }
  std::vector<uint8_t> values;
  DLIO_RETURN_NOT_OK(
      DecodeRleHybrid(p + 4, p + 4 + len, 1, count, &values, site.path, site.offset));
  return std::unique_ptr<ValueReader>(std::make_unique<BooleanValues>(nullptr, std::move(values)));
}

// DELTA_BINARY_PACKED INT32 / INT64 values as their little-endian bytes.
class DeltaIntegerValues final : public ValueReader {
 public:
  DeltaIntegerValues(const ValueSite& site, uint64_t width)
      : site_(site), width_(std::min<uint64_t>(width, 8)) {}  // INT32 or INT64: 4 or 8
  Status Open(const uint8_t* p, const uint8_t* end, uint64_t count) {
    return deltas_.Open(p, end, count, static_cast<int>(width_ * 8), &site_);
  }
  Status Next(const uint8_t** value, uint64_t* size) override {
    uint64_t v = 0;
    DLIO_RETURN_NOT_OK(deltas_.Next(&v));
    for (int k = 0; k < 8; ++k) bytes_[k] = static_cast<uint8_t>(v >> (8 * k));  // width_ used
    *value = bytes_;
    *size = width_;
    return Status::OK();
  }

 private:
  ValueSite site_;
  DeltaReader deltas_;
  uint64_t width_;
  uint8_t bytes_[8] = {};
};

// BYTE_STREAM_SPLIT: byte b of value i is byte i of stream b; the streams fill the page, each
// `stride` bytes (a writer may store more than the page's values).
class SplitValues final : public ValueReader {
 public:
  SplitValues(const uint8_t* p, uint64_t stride, uint64_t width)
      : p_(p), stride_(stride), value_(width) {}
  Status Next(const uint8_t** value, uint64_t* size) override {
    for (uint64_t b = 0; b < value_.size(); ++b) value_[b] = p_[b * stride_ + i_];
    ++i_;
    *value = value_.data();
    *size = value_.size();
    return Status::OK();
  }

 private:
  const uint8_t* p_;
  uint64_t stride_, i_ = 0;
  std::vector<uint8_t> value_;
};

Result<std::unique_ptr<ValueReader>> OpenSplit(const uint8_t* p, const uint8_t* end, uint64_t count,
                                               uint64_t width, const ValueSite& site) {
  const uint64_t size = static_cast<uint64_t>(end - p);
  const uint64_t stride = width != 0 ? size / width : 0;
  if (width == 0 || size % width != 0 || stride < count) {
    return site.Corrupt("BYTE_STREAM_SPLIT streams of " + std::to_string(size) + " bytes for " +
                        std::to_string(count) + " values of " + std::to_string(width) + " bytes");
  }
  return std::unique_ptr<ValueReader>(std::make_unique<SplitValues>(p, stride, width));
}

Result<std::unique_ptr<ValueReader>> OpenPlain(const ColumnLayout& c, const uint8_t* p,
                                               const uint8_t* end, uint64_t count,
                                               const ValueSite& site) {
  if (c.element.type == kBoolean) return OpenBooleans(p, end, count, false, site);
  if (c.width == 0)
    return std::unique_ptr<ValueReader>(std::make_unique<PlainByteArrayValues>(p, end, site));
  if (count > static_cast<uint64_t>(end - p) / c.width) {
    return site.Corrupt(std::to_string(count) + " values do not fit the page");
  }
  return std::unique_ptr<ValueReader>(std::make_unique<PlainFixedValues>(p, c.width));
}

bool SplitType(int32_t t) {
  return t == kInt32 || t == kInt64 || t == kFloat || t == kDouble || t == kFixedLenByteArray;
}

}  // namespace

Status ValueSite::Corrupt(const std::string& what) const {
  return Status::Corruption(path, ": column '", column, "': page at offset ", offset, ": ", what);
}

Result<std::unique_ptr<ValueReader>> OpenValues(int32_t encoding, const ColumnLayout& c,
                                                const uint8_t* p, const uint8_t* end,
                                                uint64_t count, uint64_t max_bytes,
                                                const ValueSite& site) {
  const int32_t type = c.element.type;
  switch (encoding) {
    case kPlain:
      return OpenPlain(c, p, end, count, site);
    case kRle:
      if (type != kBoolean) return NotForType(encoding, type, site);
      return OpenBooleans(p, end, count, true, site);
    case kDeltaBinaryPacked: {
      if (type != kInt32 && type != kInt64) return NotForType(encoding, type, site);
      auto r = std::make_unique<DeltaIntegerValues>(site, c.width);
      DLIO_RETURN_NOT_OK(r->Open(p, end, count));
      return std::unique_ptr<ValueReader>(std::move(r));
    }
    case kDeltaLengthByteArray:
      if (type != kByteArray) return NotForType(encoding, type, site);
      return OpenDeltaLengths(p, end, count, site);
    case kDeltaByteArray:
      if (type != kByteArray && type != kFixedLenByteArray) return NotForType(encoding, type, site);
      return OpenDeltaStrings(p, end, count, c.width, max_bytes, site);
    case kByteStreamSplit:
      if (!SplitType(type)) return NotForType(encoding, type, site);
      return OpenSplit(p, end, count, c.width, site);
    default:
      return Status::Unimplemented(site.path, ": column '", site.column, "': page at offset ",
                                   site.offset, ": encoding ", EncodingName(encoding), " (",
                                   encoding, ") is not supported");
  }
}

}  // namespace dlio::format_internal::parquet
