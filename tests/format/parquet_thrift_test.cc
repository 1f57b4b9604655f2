// Thrift compact protocol: the bytes of hand-encoded values (doc/specs/thrift-compact-protocol.md)
// and the decoder's refusals, each naming the file and the offset.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "format/parquet/parquet_meta.h"
#include "format/parquet/thrift_compact.h"

namespace dlio::format_internal::thrift {
namespace {

std::string Hex(const std::string& s) {
  static const char* d = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    if (!out.empty()) out += ' ';
    out += d[c >> 4];
    out += d[c & 15];
  }
  return out;
}

// `bytes` must outlive the reader.
Reader ReaderOf(const std::string& bytes, uint64_t base = 1000) {
  return Reader(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "f.parquet", base);
}

TEST_CASE("zigzag maps signed to unsigned as the spec's table", "[format][parquet]") {
  CHECK(ZigZag(0) == 0);
  CHECK(ZigZag(-1) == 1);
  CHECK(ZigZag(1) == 2);
  CHECK(ZigZag(-2) == 3);
  CHECK(ZigZag(2147483647) == 4294967294u);
  CHECK(ZigZag(-2147483648LL) == 4294967295u);
  for (int64_t v : std::vector<int64_t>{0, 1, -1, 123456789012LL, INT64_MIN, INT64_MAX}) {
    CHECK(UnZigZag(ZigZag(v)) == v);
  }
}

TEST_CASE("compact writer: field deltas, long ids, varints, binary, bools", "[format][parquet]") {
  Writer w;
  w.I32(1, 5);         // delta 1, i32: 0x15; zigzag(5) = 10
  w.I64(4, 300);       // delta 3, i64: 0x36; zigzag(300) = 600 = 0xd8 0x04
  w.I32(20, -1);       // delta 16 > 15: type byte 0x05, zigzag id 40 = 0x28, value 0x01
  w.Binary(21, "ab");  // delta 1, binary: 0x18, length 2
  w.Bool(22, true);    // 0x11
  w.Bool(23, false);   // 0x12
  w.Byte(24, -3);      // 0x13, the raw byte 0xfd
  w.Finish();          // stop
  CHECK(Hex(w.bytes()) == "15 0a 36 d8 04 05 28 01 18 02 61 62 11 12 13 fd 00");
}

TEST_CASE("compact writer: lists short and long, nested structs", "[format][parquet]") {
  Writer w;
  w.BeginList(2, kI32, 3);  // delta 2, list: 0x29; 3 x i32: 0x35
  for (int v : {1, 2, 3}) w.ListI32(v);
  w.BeginStruct(3);             // 0x1c
  w.I32(1, 7);                  // 0x15 0x0e, ids restart inside the struct
  w.EndStruct();                // 0x00
  w.I32(4, 1);                  // delta 1 from the outer struct's last id 3: 0x15 0x02
  w.BeginList(5, kBinary, 15);  // 0x19, size 15 needs the long form: 0xf8 0x0f
  for (int i = 0; i < 15; ++i) w.ListBinary("");
  w.Finish();
  CHECK(Hex(w.bytes()) == "29 35 02 04 06 1c 15 0e 00 15 02 19 f8 0f " +
                              std::string("00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"));
}

TEST_CASE("compact reader decodes what the writer wrote and skips unknown fields",
          "[format][parquet]") {
  // struct { 1: i32 5, 2: map<i32, bool> {1: true}, 3: double, 4: list<bool> [true, false],
  //          5: struct { 1: binary "x" }, 6: i64 -7 }
  const std::string bytes(
      "\x15\x0a"
      "\x1b\x01\x51\x02\x01"
      "\x17\x00\x00\x00\x00\x00\x00\xf0\x3f"
      "\x19\x21\x01\x02"
      "\x1c\x18\x01x\x00"
      "\x16\x0d"
      "\x00",
      28);
  Reader r = ReaderOf(bytes);
  REQUIRE(r.BeginStruct().ok());
  auto f = r.NextField();
  REQUIRE(f.ok());
  CHECK(f->id == 1);
  CHECK(r.I32(f->type).value() == 5);
  for (int16_t id : {2, 3, 4, 5}) {
    f = r.NextField();
    REQUIRE(f.ok());
    CHECK(f->id == id);
    REQUIRE(r.Skip(f->type).ok());
  }
  f = r.NextField();
  REQUIRE(f.ok());
  CHECK(f->id == 6);
  CHECK(r.Int(f->type).value() == -7);
  f = r.NextField();
  REQUIRE(f.ok());
  CHECK(f->type == kStop);
  CHECK(r.consumed() == bytes.size());
}

TEST_CASE("compact reader errors name the file and the offset", "[format][parquet]") {
  SECTION("truncated varint") {
    const std::string b1("\x15\x80\x80", 3);
    Reader r = ReaderOf(b1);
    REQUIRE(r.BeginStruct().ok());
    auto f = r.NextField();
    REQUIRE(f.ok());
    auto v = r.I32(f->type);
    REQUIRE_FALSE(v.ok());
    CHECK(v.status().ToString().find("f.parquet: truncated varint at offset 1003") !=
          std::string::npos);
  }
  SECTION("a list longer than the bytes left") {
    const std::string b2("\xf5\xff\xff\xff\xff\x0f", 6);
    Reader r = ReaderOf(b2);
    auto l = r.BeginList();
    REQUIRE_FALSE(l.ok());
    CHECK(l.status().ToString().find("list of 4294967295 elements past the end at offset 1006") !=
          std::string::npos);
  }
  SECTION("a binary longer than the bytes left") {
    const std::string b3("\x18\x7f", 2);
    Reader r = ReaderOf(b3);
    REQUIRE(r.BeginStruct().ok());
    REQUIRE(r.NextField().ok());
    auto b = r.Binary();
    REQUIRE_FALSE(b.ok());
    CHECK(b.status().ToString().find("binary of 127 bytes past the end at offset 1002") !=
          std::string::npos);
  }
  SECTION("structs nested deeper than the limit") {
    std::string deep = "\x1c";
    for (int i = 0; i < 40; ++i) deep += "\x1c";
    Reader r = ReaderOf(deep);  // deep outlives r
    REQUIRE(r.BeginStruct().ok());
    auto f = r.NextField();
    REQUIRE(f.ok());
    Status st = r.Skip(f->type);
    REQUIRE_FALSE(st.ok());
    CHECK(st.ToString().find("nested too deep") != std::string::npos);
  }
  SECTION("a struct without its stop byte") {
    const std::string b4("\x15\x02", 2);
    Reader r = ReaderOf(b4);
    REQUIRE(r.BeginStruct().ok());
    REQUIRE(r.NextField().ok());
    REQUIRE(r.I32(kI32).ok());
    auto f = r.NextField();
    REQUIRE_FALSE(f.ok());
    CHECK(f.status().ToString().find("no stop byte) at offset 1002") != std::string::npos);
  }
}

TEST_CASE("parquet footer and page header round-trip", "[format][parquet]") {
  using namespace dlio::format_internal::parquet;  // NOLINT(build/namespaces)
  FileMetaData m;
  m.num_rows = 70000;
  m.created_by = "test";
  SchemaElement root;
  root.name = "schema";
  root.num_children = 2;
  SchemaElement a;
  a.name = "a";
  a.type = kInt32;
  a.repetition = kRequired;
  a.logical = kLogicalInteger;
  a.int_bits = 8;
  a.int_signed = false;
  a.converted_type = 11;
  SchemaElement b;
  b.name = "b";
  b.type = kFixedLenByteArray;
  b.type_length = 2;
  b.repetition = kOptional;
  b.logical = kLogicalFloat16;
  m.schema = {root, a, b};
  RowGroup g;
  g.num_rows = 70000;
  g.total_byte_size = 123;
  ColumnChunk c;
  c.file_offset = 4;
  c.meta.type = kInt32;
  c.meta.encodings = {kPlain, kRle};
  c.meta.path = {"a"};
  c.meta.codec = kZstd;
  c.meta.num_values = 70000;
  c.meta.total_compressed_size = 5000000000LL;
  c.meta.data_page_offset = 4;
  c.meta.dictionary_page_offset = 4;
  g.columns = {c, c};
  m.row_groups = {g};
  const std::string bytes = EncodeFileMetaData(m);
  auto d = DecodeFileMetaData(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "x", 0);
  REQUIRE(d.ok());
  REQUIRE(d->schema.size() == 3);
  CHECK(d->schema[1].int_bits == 8);
  CHECK_FALSE(d->schema[1].int_signed);
  CHECK(d->schema[1].converted_type == 11);
  CHECK(d->schema[2].logical == kLogicalFloat16);
  CHECK(d->schema[2].type_length == 2);
  CHECK(d->schema[2].repetition == kOptional);
  CHECK(d->num_rows == 70000);
  CHECK(d->created_by == "test");
  REQUIRE(d->row_groups.size() == 1);
  REQUIRE(d->row_groups[0].columns.size() == 2);
  const ColumnMetaData& cm = d->row_groups[0].columns[1].meta;
  CHECK(cm.codec == kZstd);
  CHECK(cm.encodings == std::vector<int32_t>{kPlain, kRle});
  CHECK(cm.total_compressed_size == 5000000000LL);
  CHECK(cm.dictionary_page_offset == 4);

  PageHeader h;
  h.uncompressed_size = 100;
  h.compressed_size = 60;
  h.num_values = 25;
  const std::string hb = EncodePageHeader(h);
  size_t used = 0;
  auto dh = DecodePageHeader(reinterpret_cast<const uint8_t*>(hb.data()), hb.size(), "x", 0, &used);
  REQUIRE(dh.ok());
  CHECK(used == hb.size());
  CHECK(dh->num_values == 25);
  CHECK(dh->compressed_size == 60);
  CHECK(dh->has_data_header);
}

}  // namespace
}  // namespace dlio::format_internal::thrift
