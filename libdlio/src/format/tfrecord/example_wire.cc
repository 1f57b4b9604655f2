#include "format/tfrecord/example_wire.h"

#include <cstring>

namespace dlio::format_internal {
namespace {

enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

// A bounded walk over [pos, end) of a payload whose first `avail` bytes are present.
struct Cursor {
  const uint8_t* p;
  uint64_t avail;
  uint64_t pos, end;
  const char* error = nullptr;
  uint64_t error_at = 0;
  bool need_more = false;

  bool Fail(const char* what) {
    error = what;
    error_at = pos;
    return false;
  }

  bool Varint(uint64_t* v) {
    uint64_t result = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos >= end) return Fail("truncated varint");
      if (pos >= avail) {
        need_more = true;
        return false;
      }
      const uint8_t b = p[pos++];
      result |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) {
        *v = result;
        return true;
      }
    }
    return Fail("varint longer than 10 bytes");
  }

  bool Tag(uint32_t* field, uint32_t* wire_type) {
    uint64_t tag = 0;
    if (!Varint(&tag)) return false;
    *field = static_cast<uint32_t>(tag >> 3);
    *wire_type = static_cast<uint32_t>(tag & 7);
    if (*field == 0) return Fail("field number 0");
    return true;
  }

  // A length-delimited field's bounds [*begin, *begin + *len); moves past it.
  bool Delimited(uint64_t* begin, uint64_t* len) {
    if (!Varint(len)) return false;
    if (*len > end - pos) return Fail("length-delimited field runs past its message");
    *begin = pos;
    pos += *len;
    return true;
  }

  bool Skip(uint32_t wire_type) {
    uint64_t v = 0, begin = 0;
    switch (wire_type) {
      case kVarint:
        return Varint(&v);
      case kFixed64:
        if (end - pos < 8) return Fail("truncated fixed64");
        pos += 8;
        return true;
      case kLengthDelimited:
        return Delimited(&begin, &v);
      case kFixed32:
        if (end - pos < 4) return Fail("truncated fixed32");
        pos += 4;
        return true;
      default:
        return Fail("unsupported wire type (groups are not used by tf.train.Example)");
    }
  }

  // A cursor over a nested message [begin, begin + len).
  Cursor Sub(uint64_t begin, uint64_t len) const {
    Cursor c{p, avail, begin, begin + len};
    return c;
  }
  // Takes over a nested cursor's failure.
  bool Adopt(const Cursor& c) {
    error = c.error;
    error_at = c.error_at;
    need_more = c.need_more;
    return false;
  }
};

// The first value of a BytesList [begin, end); *has is false when the list is empty.
bool FirstBytesValue(Cursor c, SampleSpan* span, bool* has, Cursor* outer) {
  *has = false;
  while (c.pos < c.end) {
    uint32_t field = 0, wt = 0;
    if (!c.Tag(&field, &wt)) return outer->Adopt(c);
    if (field == 1 && wt == kLengthDelimited) {
      uint64_t begin = 0, len = 0;
      if (!c.Delimited(&begin, &len)) return outer->Adopt(c);
      span->offset = begin;
      span->size = len;
      *has = true;
      return true;
    }
    if (!c.Skip(wt)) return outer->Adopt(c);
  }
  return true;
}

// A Feature [begin, end): *is_bytes when its (first) kind is a bytes_list with a value.
bool FeatureBytes(Cursor c, SampleSpan* span, bool* is_bytes, Cursor* outer) {
  *is_bytes = false;
  while (c.pos < c.end) {
    uint32_t field = 0, wt = 0;
    if (!c.Tag(&field, &wt)) return outer->Adopt(c);
    if (field >= 1 && field <= 3 && wt == kLengthDelimited) {
      uint64_t begin = 0, len = 0;
      if (!c.Delimited(&begin, &len)) return outer->Adopt(c);
      if (field != 1) return true;  // float_list or int64_list
      return FirstBytesValue(c.Sub(begin, len), span, is_bytes, outer);
    }
    if (!c.Skip(wt)) return outer->Adopt(c);
  }
  return true;
}

}  // namespace

ExampleScan FindSampleBytes(const uint8_t* p, uint64_t avail, uint64_t total, SampleSpan* span,
                            const char** error, uint64_t* error_at) {
  static constexpr char kImage[] = "image";
  Cursor example{p, avail < total ? avail : total, 0, total};
  SampleSpan first{};
  bool have_first = false;
  auto fail = [&](const Cursor& c) {
    if (c.need_more) return ExampleScan::kNeedMore;
    *error = c.error;
    *error_at = c.error_at;
    return ExampleScan::kError;
  };
  while (example.pos < example.end) {
    uint32_t field = 0, wt = 0;
    if (!example.Tag(&field, &wt)) return fail(example);
    if (field != 1 || wt != kLengthDelimited) {  // not Example.features
      if (!example.Skip(wt)) return fail(example);
      continue;
    }
    uint64_t fbegin = 0, flen = 0;
    if (!example.Delimited(&fbegin, &flen)) return fail(example);
    Cursor features = example.Sub(fbegin, flen);
    while (features.pos < features.end) {
      if (!features.Tag(&field, &wt)) return fail(features);
      if (field != 1 || wt != kLengthDelimited) {  // not a Features.feature map entry
        if (!features.Skip(wt)) return fail(features);
        continue;
      }
      uint64_t ebegin = 0, elen = 0;
      if (!features.Delimited(&ebegin, &elen)) return fail(features);
      Cursor entry = features.Sub(ebegin, elen);
      uint64_t key_begin = 0, key_len = 0, value_begin = 0, value_len = 0;
      bool has_key = false, has_value = false;
      while (entry.pos < entry.end) {
        if (!entry.Tag(&field, &wt)) return fail(entry);
        if (field == 1 && wt == kLengthDelimited && !has_key) {
          if (!entry.Delimited(&key_begin, &key_len)) return fail(entry);
          has_key = true;
        } else if (field == 2 && wt == kLengthDelimited && !has_value) {
          if (!entry.Delimited(&value_begin, &value_len)) return fail(entry);
          has_value = true;
        } else if (!entry.Skip(wt)) {
          return fail(entry);
        }
      }
      if (!has_value) continue;  // a Feature with no kind holds nothing
      SampleSpan s{};
      bool is_bytes = false;
      if (!FeatureBytes(entry.Sub(value_begin, value_len), &s, &is_bytes, &entry)) {
        return fail(entry);
      }
      if (!is_bytes) continue;
      const bool is_image = has_key && key_len == sizeof kImage - 1;
      if (is_image && key_begin + key_len > example.avail) {
        entry.need_more = true;
        return fail(entry);
      }
      if (is_image && std::memcmp(p + key_begin, kImage, key_len) == 0) {
        *span = s;
        return ExampleScan::kFound;
      }
      if (!have_first) {
        first = s;
        have_first = true;
      }
    }
  }
  if (have_first) {
    *span = first;
    return ExampleScan::kFound;
  }
  *error = "no bytes_list feature with a value (expected \"image\")";
  *error_at = 0;
  return ExampleScan::kError;
}

}  // namespace dlio::format_internal
