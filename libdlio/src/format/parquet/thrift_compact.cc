#include "format/parquet/thrift_compact.h"

#include <cstring>

namespace dlio::format_internal::thrift {

uint64_t ZigZag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}

int64_t UnZigZag(uint64_t v) { return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1); }

void Writer::Varint(uint64_t v) {
  while (v >= 0x80) {
    out_.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out_.push_back(static_cast<char>(v));
}

void Writer::Header(int16_t id, Type t) {
  const int delta = id - last_id_.back();
  if (delta > 0 && delta <= 15) {
    out_.push_back(static_cast<char>((delta << 4) | t));
  } else {
    out_.push_back(static_cast<char>(t));
    Varint(ZigZag(id));
  }
  last_id_.back() = id;
}

void Writer::Binary(int16_t id, std::string_view s) {
  Header(id, kBinary);
  ListBinary(s);
}

void Writer::ListBinary(std::string_view s) {
  Varint(s.size());
  out_.append(s.data(), s.size());
}

void Writer::BeginStruct(int16_t id) {
  Header(id, kStruct);
  last_id_.push_back(0);
}

void Writer::EndStruct() {
  out_.push_back(static_cast<char>(kStop));
  last_id_.pop_back();
}

void Writer::BeginList(int16_t id, Type elem, size_t n) {
  Header(id, kList);
  if (n < 15) {
    out_.push_back(static_cast<char>((n << 4) | elem));
  } else {
    out_.push_back(static_cast<char>(0xf0 | elem));
    Varint(n);
  }
}

Status Reader::Error(const std::string& what) const {
  return Status::Corruption(path_, ": ", what, " at offset ", offset());
}

Result<uint64_t> Reader::Varint() {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (p_ >= end_) return Error("truncated varint");
    const uint8_t b = *p_++;
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return v;
  }
  return Error("varint longer than 10 bytes");
}

Result<Field> Reader::NextField() {
  if (last_id_.empty()) return Error("field outside a struct");
  if (p_ >= end_) return Error("truncated struct (no stop byte)");
  const uint8_t b = *p_++;
  Field f;
  f.type = b & 0x0f;
  if (f.type == kStop) {
    if (b != 0) return Error("bad stop byte");
    last_id_.pop_back();
    return f;
  }
  if (f.type > kStruct) return Error("unknown field type " + std::to_string(f.type));
  const int delta = b >> 4;
  if (delta != 0) {
    f.id = static_cast<int16_t>(last_id_.back() + delta);
  } else {
    DLIO_ASSIGN_OR_RETURN(uint64_t z, Varint());
    const int64_t id = UnZigZag(z);
    if (id < INT16_MIN || id > INT16_MAX) return Error("field id out of range");
    f.id = static_cast<int16_t>(id);
  }
  last_id_.back() = f.id;
  return f;
}

Status Reader::BeginStruct() {
  if (last_id_.size() >= static_cast<size_t>(kMaxDepth)) return Error("structs nested too deep");
  last_id_.push_back(0);
  return Status::OK();
}

Result<int64_t> Reader::Int(uint8_t type) {
  if (type == kByte) {
    if (p_ >= end_) return Error("truncated byte");
    return static_cast<int8_t>(*p_++);
  }
  if (type != kI16 && type != kI32 && type != kI64) {
    return Error("integer expected, found type " + std::to_string(type));
  }
  DLIO_ASSIGN_OR_RETURN(uint64_t z, Varint());
  return UnZigZag(z);
}

Result<int32_t> Reader::I32(uint8_t type) {
  DLIO_ASSIGN_OR_RETURN(int64_t v, Int(type));
  if (v < INT32_MIN || v > INT32_MAX) return Error("i32 out of range");
  return static_cast<int32_t>(v);
}

Result<std::string> Reader::Binary() {
  DLIO_ASSIGN_OR_RETURN(uint64_t n, Varint());
  if (n > static_cast<uint64_t>(end_ - p_)) {
    return Error("binary of " + std::to_string(n) + " bytes past the end");
  }
  std::string s(reinterpret_cast<const char*>(p_), n);
  p_ += n;
  return s;
}

Result<List> Reader::BeginList() {
  if (p_ >= end_) return Error("truncated list header");
  const uint8_t b = *p_++;
  List l;
  l.elem = b & 0x0f;
  l.size = b >> 4;
  if (l.size == 15) {
    DLIO_ASSIGN_OR_RETURN(l.size, Varint());
  }
  // Every element takes at least one byte, so a longer list cannot fit what is left.
  if (l.size > static_cast<uint64_t>(end_ - p_)) {
    return Error("list of " + std::to_string(l.size) + " elements past the end");
  }
  return l;
}

Result<bool> Reader::ListBool() {
  if (p_ >= end_) return Error("truncated bool");
  const uint8_t b = *p_++;
  if (b > 2) return Error("bad bool byte " + std::to_string(b));
  return b == kTrue;
}

Status Reader::Skip(uint8_t type) { return SkipDepth(type, 0); }

// Collection elements: a bool is a byte there, not folded into a header.
Status Reader::SkipElement(uint8_t type, int depth) {
  if (type == kTrue || type == kFalse) return ListBool().status();
  return SkipDepth(type, depth);
}

Status Reader::SkipDepth(uint8_t type, int depth) {
  if (depth > kMaxDepth) return Error("values nested too deep");
  switch (type) {
    case kTrue:
    case kFalse:
      return Status::OK();
    case kByte:
    case kI16:
    case kI32:
    case kI64:
      return Int(type).status();
    case kDouble:
      if (end_ - p_ < 8) return Error("truncated double");
      p_ += 8;
      return Status::OK();
    case kBinary:
      return Binary().status();
    case kList:
    case kSet: {
      DLIO_ASSIGN_OR_RETURN(List l, BeginList());
      for (uint64_t i = 0; i < l.size; ++i) DLIO_RETURN_NOT_OK(SkipElement(l.elem, depth + 1));
      return Status::OK();
    }
    case kMap: {
      DLIO_ASSIGN_OR_RETURN(uint64_t n, Varint());
      if (n == 0) return Status::OK();
      if (n > static_cast<uint64_t>(end_ - p_)) return Error("map past the end");
      const uint8_t kv = *p_++;
      for (uint64_t i = 0; i < n; ++i) {
        DLIO_RETURN_NOT_OK(SkipElement(kv >> 4, depth + 1));
        DLIO_RETURN_NOT_OK(SkipElement(kv & 0x0f, depth + 1));
      }
      return Status::OK();
    }
    case kStruct: {
      DLIO_RETURN_NOT_OK(BeginStruct());
      for (;;) {
        DLIO_ASSIGN_OR_RETURN(Field f, NextField());
        if (f.type == kStop) return Status::OK();
        DLIO_RETURN_NOT_OK(SkipDepth(f.type, depth + 1));
      }
    }
    default:
      return Error("unknown type " + std::to_string(type));
  }
}

}  // namespace dlio::format_internal::thrift
