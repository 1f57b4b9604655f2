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

// PLAIN byte_array values: a 4-byte length, then the bytes; bounds relative to p into offs.
Status SplitPlainByteArrays(const uint8_t* p, const uint8_t* end, uint64_t count,
                            std::vector<uint64_t>* offs, const ValueSite& site) {
  const uint8_t* q = p;
  for (uint64_t i = 0; i < count; ++i) {
    if (end - q < 4) return site.Corrupt("byte_array value past the page end");
    const uint32_t len = Le32(q);
    q += 4;
    if (static_cast<uint64_t>(end - q) < len) {
      return site.Corrupt("byte_array value of " + std::to_string(len) +
                          " bytes past the page end");
    }
    offs->push_back(static_cast<uint64_t>(q - p));
    q += len;
    offs->push_back(static_cast<uint64_t>(q - p));
  }
  return Status::OK();
}

// DELTA_BINARY_PACKED INT32 / INT64 values as their little-endian bytes.
Status DeltaIntegers(const uint8_t* p, const uint8_t* end, uint64_t count, uint64_t width,
                     std::vector<uint8_t>* out, const ValueSite& site) {
  std::vector<uint64_t> v;
  DLIO_RETURN_NOT_OK(
      DecodeDeltaBinaryPacked(p, end, count, static_cast<int>(width * 8), &v, site).status());
  out->resize(count * width);
  for (uint64_t i = 0; i < count; ++i) {
    for (uint64_t k = 0; k < width; ++k)
      (*out)[i * width + k] = static_cast<uint8_t>(v[i] >> 8 * k);
  }
  return Status::OK();
}

bool SplitType(int32_t t) {
  return t == kInt32 || t == kInt64 || t == kFloat || t == kDouble || t == kFixedLenByteArray;
}

}  // namespace

Status ValueSite::Corrupt(const std::string& what) const {
  return Status::Corruption(path, ": column '", column, "': page at offset ", offset, ": ", what);
}

Status DecodeValues(int32_t encoding, const ColumnLayout& c, const uint8_t* p, const uint8_t* end,
                    uint64_t count, uint64_t max_bytes, PageValues* out, const ValueSite& site) {
  const int32_t type = c.element.type;
  const uint64_t w = c.width;
  out->data = p;
  out->offs.clear();
  out->owned.clear();
  Status st;
  switch (encoding) {
    case kPlain:
      if (type == kBoolean) {
        st = DecodeBooleans(p, end, count, false, &out->owned, site);
      } else if (w == 0) {
        return SplitPlainByteArrays(p, end, count, &out->offs, site);
      } else if (count > static_cast<uint64_t>(end - p) / w) {
        return site.Corrupt(std::to_string(count) + " values do not fit the page");
      }
      break;
    case kRle:
      if (type != kBoolean) return NotForType(encoding, type, site);
      st = DecodeBooleans(p, end, count, true, &out->owned, site);
      break;
    case kDeltaBinaryPacked:
      if (type != kInt32 && type != kInt64) return NotForType(encoding, type, site);
      st = DeltaIntegers(p, end, count, w, &out->owned, site);
      break;
    case kDeltaLengthByteArray:
      if (type != kByteArray) return NotForType(encoding, type, site);
      return DecodeDeltaLengthByteArray(p, end, count, &out->offs, site).status();
    case kDeltaByteArray:
      if (type != kByteArray && type != kFixedLenByteArray) return NotForType(encoding, type, site);
      st = DecodeDeltaByteArray(p, end, count, w, max_bytes, &out->owned, &out->offs, site);
      break;
    case kByteStreamSplit:
      if (!SplitType(type)) return NotForType(encoding, type, site);
      st = DecodeByteStreamSplit(p, end, count, w, &out->owned, site);
      break;
    default:
      return Status::Unimplemented(site.path, ": column '", site.column, "': page at offset ",
                                   site.offset, ": encoding ", EncodingName(encoding), " (",
                                   encoding, ") is not supported");
  }
  if (!out->owned.empty()) out->data = out->owned.data();
  return st;
}

Status DecodeByteStreamSplit(const uint8_t* p, const uint8_t* end, uint64_t count, uint64_t width,
                             std::vector<uint8_t>* out, const ValueSite& site) {
  // The streams fill the page; each is `stride` bytes (a writer may store more than count).
  const uint64_t size = static_cast<uint64_t>(end - p);
  const uint64_t stride = width != 0 ? size / width : 0;
  if (width == 0 || size % width != 0 || stride < count) {
    return site.Corrupt("BYTE_STREAM_SPLIT streams of " + std::to_string(size) + " bytes for " +
                        std::to_string(count) + " values of " + std::to_string(width) + " bytes");
  }
  out->resize(count * width);
  for (uint64_t b = 0; b < width; ++b) {
    const uint8_t* stream = p + b * stride;
    for (uint64_t i = 0; i < count; ++i) (*out)[i * width + b] = stream[i];
  }
  return Status::OK();
}

Status DecodeBooleans(const uint8_t* p, const uint8_t* end, uint64_t count, bool rle,
                      std::vector<uint8_t>* out, const ValueSite& site) {
  if (!rle) {
    if ((count + 7) / 8 > static_cast<uint64_t>(end - p)) {
      return site.Corrupt(std::to_string(count) + " bit-packed BOOLEAN values need " +
                          std::to_string((count + 7) / 8) + " bytes, the page has " +
                          std::to_string(end - p));
    }
    out->resize(count);
    for (uint64_t i = 0; i < count; ++i) (*out)[i] = (p[i / 8] >> (i % 8)) & 1;
    return Status::OK();
  }
  if (end - p < 4) return site.Corrupt("RLE BOOLEAN values without their 4-byte length");
  const uint64_t len = Le32(p);
  if (len > static_cast<uint64_t>(end - p) - 4) {
    return site.Corrupt("RLE BOOLEAN values of " + std::to_string(len) +
                        " bytes past the page end");
  }
  std::vector<uint32_t> bits;
  DLIO_RETURN_NOT_OK(DecodeRleHybrid(p + 4, p + 4 + len, 1, count, &bits, site.path, site.offset));
  out->assign(bits.begin(), bits.end());
  return Status::OK();
}

}  // namespace dlio::format_internal::parquet
