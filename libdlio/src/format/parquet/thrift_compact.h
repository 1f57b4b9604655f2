// Thrift's compact protocol (the encoding of Parquet's footer and page headers), written from the
// Thrift specification (doc/specs/thrift-compact-protocol.md): varints, zigzag integers, field
// headers as id deltas, list headers with the size in the high nibble. Only what Parquet uses:
// structs, lists, i8/i16/i32/i64, double, binary, bool; maps and sets are skipped when read.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dlio/status.h"

namespace dlio::format_internal::thrift {

// Compact protocol type codes.
enum Type : uint8_t {
  kStop = 0,
  kTrue = 1,  // a bool field holding true (in lists: the element type of bools)
  kFalse = 2,
  kByte = 3,
  kI16 = 4,
  kI32 = 5,
  kI64 = 6,
  kDouble = 7,
  kBinary = 8,
  kList = 9,
  kSet = 10,
  kMap = 11,
  kStruct = 12,
};

uint64_t ZigZag(int64_t v);
int64_t UnZigZag(uint64_t v);

// Builds one encoded struct. Fields must be written in increasing id order within each struct
// (the delta encoding needs it only for compactness, but Parquet readers expect it). Not
// thread-safe.
class Writer {
 public:
  void I32(int16_t id, int32_t v) { Header(id, kI32), Varint(ZigZag(v)); }
  void I64(int16_t id, int64_t v) { Header(id, kI64), Varint(ZigZag(v)); }
  void Binary(int16_t id, std::string_view s);
  void Byte(int16_t id, int8_t v) { Header(id, kByte), out_.push_back(static_cast<char>(v)); }
  void Bool(int16_t id, bool v) { Header(id, v ? kTrue : kFalse); }
  // A struct field: its fields follow, then EndStruct.
  void BeginStruct(int16_t id);
  void EndStruct();
  // A list field of `n` elements of `elem` type; then the elements (ListI32 / ListBinary /
  // BeginListStruct..EndStruct), `n` of them.
  void BeginList(int16_t id, Type elem, size_t n);
  void ListI32(int32_t v) { Varint(ZigZag(v)); }
  void ListBinary(std::string_view s);
  void BeginListStruct() { last_id_.push_back(0); }
  // Ends the outermost struct (writes its stop byte); bytes() is then the encoding.
  void Finish() { out_.push_back(static_cast<char>(kStop)); }
  const std::string& bytes() const { return out_; }

  void Varint(uint64_t v);

 private:
  void Header(int16_t id, Type t);
  std::string out_;
  std::vector<int16_t> last_id_{0};
};

// A field header read: its id and type (kStop at the end of a struct).
struct Field {
  int16_t id = 0;
  uint8_t type = kStop;
};
// A list header read.
struct List {
  uint8_t elem = kStop;
  uint64_t size = 0;
};

// Reads compact-protocol bytes [data, data + n) that lie at file offset `base` of `path`: every
// error is Corruption naming the path and the file offset where decoding failed. Nesting deeper
// than kMaxDepth and lists longer than the bytes left are refused (no allocation is ever sized by
// an unchecked count). Not thread-safe.
class Reader {
 public:
  static constexpr int kMaxDepth = 32;
  Reader(const uint8_t* data, size_t n, std::string path, uint64_t base)
      : p_(data), begin_(data), end_(data + n), path_(std::move(path)), base_(base) {}

  // The next field of the current struct; kStop ends it (and pops the id context).
  Result<Field> NextField();
  // Enter a struct value (the field's, or a list element's); leave it by reading up to kStop.
  Status BeginStruct();
  Result<int64_t> Int(uint8_t type);  // i8/i16/i32/i64 of the given type
  Result<int32_t> I32(uint8_t type);  // Int() that must fit 32 bits
  Result<std::string> Binary();
  Result<List> BeginList();
  Result<bool> ListBool();
  // Skips a value of `type` (any depth up to kMaxDepth).
  Status Skip(uint8_t type);
  // Corruption "<path>: <what> at offset <file offset>".
  Status Error(const std::string& what) const;
  uint64_t offset() const { return base_ + static_cast<uint64_t>(p_ - begin_); }
  size_t consumed() const { return static_cast<size_t>(p_ - begin_); }

 private:
  Result<uint64_t> Varint();
  Status SkipDepth(uint8_t type, int depth);
  Status SkipElement(uint8_t type, int depth);
  const uint8_t* p_;
  const uint8_t* begin_;
  const uint8_t* end_;
  std::string path_;
  uint64_t base_;
  std::vector<int16_t> last_id_;
};

}  // namespace dlio::format_internal::thrift
