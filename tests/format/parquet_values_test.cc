// parquet value encodings on hand-built bytes (parquet-format Encodings.md): the spec's own
// examples of DELTA_BINARY_PACKED (with a valid block size of 128 in 4 miniblocks instead of the
// examples' 8), DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY and BYTE_STREAM_SPLIT, BOOLEAN values
// PLAIN and RLE, and the refusals of bytes that lie, each naming the file and the page's offset.
#include "format/parquet/parquet_values.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "format/io_util.h"
#include "format/parquet/parquet_meta.h"

namespace dlio::format_internal::parquet {
namespace {

const uint8_t* AsBytes(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

const std::string kPath = "f.parquet";
const std::string kColumn = "c";
const ValueSite kSite{kPath, kColumn, 77};

std::string Bytes(std::initializer_list<int> b) {
  std::string s;
  for (int v : b) s += static_cast<char>(v);
  return s;
}

// The header of `count` values in blocks of 128 values, 4 miniblocks of 32, first value zigzag
// `first_zz` (one byte).
std::string DeltaHeader(int count, int first_zz) { return Bytes({0x80, 0x01, 4, count, first_zz}); }

// The values of a DELTA_BINARY_PACKED stream, and (*used) where it ends.
std::vector<uint64_t> Delta(const std::string& b, uint64_t count, int bits, uint64_t* used) {
  DeltaReader r;
  Status st = r.Open(AsBytes(b), AsBytes(b) + b.size(), count, bits, &kSite);
  INFO(st.ToString());
  REQUIRE(st.ok());
  auto end = r.End();
  INFO(end.status().ToString());
  REQUIRE(end.ok());
  *used = static_cast<uint64_t>(*end - AsBytes(b));
  std::vector<uint64_t> out(count);
  for (uint64_t& v : out) REQUIRE(r.Next(&v).ok());
  return out;
}

// The error of reading all `count` values (or of finding the end first).
std::string Error(const std::string& b, uint64_t count, int bits) {
  DeltaReader r;
  Status st = r.Open(AsBytes(b), AsBytes(b) + b.size(), count, bits, &kSite);
  if (st.ok()) st = r.End().status();
  uint64_t v = 0;
  for (uint64_t i = 0; i < count && st.ok(); ++i) st = r.Next(&v);
  REQUIRE_FALSE(st.ok());
  CHECK(st.code() == StatusCode::kCorruption);
  return st.ToString();
}

ColumnLayout Column(int32_t type, uint64_t width) {
  ColumnLayout c;
  c.name = "c";
  c.width = width;
  c.element.type = type;
  return c;
}

// `count` values of a column of `type` in `encoding`, each as a string; the first error instead
// (as its text) when there is one.
std::vector<std::string> Values(int32_t encoding, const ColumnLayout& c, const std::string& b,
                                uint64_t count, std::string* error, uint64_t max = 1 << 20) {
  std::vector<std::string> out;
  auto r = OpenValues(encoding, c, AsBytes(b), AsBytes(b) + b.size(), count, max, kSite);
  Status st = r.status();
  const uint8_t* v = nullptr;
  uint64_t n = 0;
  for (uint64_t i = 0; i < count && st.ok(); ++i) {
    st = (*r)->Next(&v, &n);
    if (st.ok()) out.emplace_back(reinterpret_cast<const char*>(v), n);
  }
  *error = st.ok() ? "" : st.ToString();
  return out;
}

std::vector<std::string> Values(int32_t encoding, const ColumnLayout& c, const std::string& b,
                                uint64_t count) {
  std::string error;
  std::vector<std::string> out = Values(encoding, c, b, count, &error);
  INFO(error);
  REQUIRE(error.empty());
  return out;
}

bool Has(const std::string& text, const std::string& part) {
  INFO(text);
  return text.find(part) != std::string::npos;
}

// Spec example 2's block: min delta -2 (zigzag 3), widths 2,0,0,0, then 0,0,0,3,3,3,3 on 2 bits
// (c0 3f) padded to 32 values (8 bytes).
const std::string kExample2 =
    DeltaHeader(8, 14) + Bytes({3, 2, 0, 0, 0, 0xc0, 0x3f, 0, 0, 0, 0, 0, 0});

TEST_CASE("DELTA_BINARY_PACKED decodes the spec's examples", "[format][parquet]") {
  uint64_t used = 0;
  // Example 1: 1..5, deltas all 1: min delta 1 (zigzag 2), bit widths 0 (no miniblock bytes).
  const std::string ex1 = DeltaHeader(5, 2) + Bytes({2, 0, 0, 0, 0});
  CHECK(Delta(ex1, 5, 32, &used) == std::vector<uint64_t>{1, 2, 3, 4, 5});
  CHECK(used == ex1.size());
  CHECK(Delta(kExample2, 8, 32, &used) == std::vector<uint64_t>{7, 5, 3, 1, 2, 3, 4, 5});
  CHECK(used == kExample2.size());
  // One value: the header alone.
  CHECK(Delta(DeltaHeader(1, 14), 1, 64, &used) == std::vector<uint64_t>{7});
  CHECK(used == 5);
}

TEST_CASE("DELTA_BINARY_PACKED across miniblocks, wrapping and 64-bit widths",
          "[format][parquet]") {
  uint64_t used = 0;
  // 40 values: min delta 0, deltas i % 8 on 3 bits (Encodings.md's 88 c6 fa for 0..7), 39 of
  // them over two miniblocks of 12 bytes each.
  std::string b = DeltaHeader(40, 0) + Bytes({0, 3, 3, 0, 0});
  for (int k = 0; k < 8; ++k) b += Bytes({0x88, 0xc6, 0xfa});
  std::vector<uint64_t> want = {0};
  for (uint64_t i = 0; i < 39; ++i) want.push_back(want.back() + i % 8);
  CHECK(Delta(b, 40, 32, &used) == want);
  CHECK(used == b.size());
  // INT32 wraps: 2147483647 then +1 is -2147483648 (zigzag of the first: fe ff ff ff 0f).
  const std::string wrap = Bytes({0x80, 0x01, 4, 2, 0xfe, 0xff, 0xff, 0xff, 0x0f, 2, 0, 0, 0, 0});
  CHECK(Delta(wrap, 2, 32, &used) == std::vector<uint64_t>{0x7fffffff, 0x80000000});
  // INT64 with a 64-bit miniblock: 0, then deltas INT64_MIN and INT64_MAX; min delta INT64_MIN
  // (zigzag 2^64 - 1: ff x 9, 01), relative deltas 0 and 2^64 - 1.
  std::string wide = DeltaHeader(3, 0) + std::string(9, '\xff') + Bytes({1, 64, 0, 0, 0});
  wide += std::string(8, '\0') + std::string(8, '\xff') + std::string(30 * 8, '\0');
  CHECK(Delta(wide, 3, 64, &used) ==
        std::vector<uint64_t>{0, 0x8000000000000000ull, 0xffffffffffffffffull});
  CHECK(used == wide.size());
}

TEST_CASE("DELTA_BINARY_PACKED refuses numbers that lie", "[format][parquet]") {
  const std::string at = "f.parquet: column 'c': page at offset 77: DELTA_BINARY_PACKED ";
  CHECK(Has(Error(Bytes({100, 4, 1, 0}), 1, 32), at + "block size 100 (not a multiple of 128)"));
  CHECK(Has(Error(Bytes({0x80, 0x01, 3, 1, 0}), 1, 32), at + "3 miniblocks in a block of 128"));
  CHECK(Has(Error(Bytes({0x80, 0x01, 8, 1, 0}), 1, 32), at + "8 miniblocks in a block of 128"));
  CHECK(Has(Error(DeltaHeader(9, 0), 8, 32), at + "header counts 9 values, the page has 8"));
  CHECK(Has(Error(Bytes({0x80, 0x01}), 1, 32), at + "header truncated at value byte 2"));
  // Bit widths past the type's: 33 for INT32, 65 for INT64, at the width's byte.
  std::string w = kExample2;
  w[6] = 33;
  CHECK(Has(Error(w, 8, 32),
            at + "miniblock bit width 33 exceeds the type's 32 bits at value byte 6"));
  w[6] = 65;
  CHECK(Has(Error(w, 8, 64),
            at + "miniblock bit width 65 exceeds the type's 64 bits at value byte 6"));
  // A block size of 2^40 in 2^35 miniblocks: refused from the bytes left, nothing allocated.
  const std::string huge =
      Bytes({0x80, 0x80, 0x80, 0x80, 0x80, 0x20, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 2, 0, 0});
  CHECK(Has(Error(huge, 2, 32), at + "34359738368 bit widths past the end at value byte 15"));
  // The miniblock's 8 bytes cut to 7.
  CHECK(Has(Error(kExample2.substr(0, kExample2.size() - 1), 8, 32),
            at + "miniblock of 32 values of 2 bits past the end at value byte 10"));
  CHECK(Has(Error(DeltaHeader(2, 0), 2, 32), at + "min delta truncated at value byte 5"));
}

// "Hello", "World", "Foobar", "ABCDEF": lengths 5,5,6,6 (first 5: zigzag 10; deltas 0,1,0 on 1
// bit: 02), then the bytes.
const std::string kHelloLengths = DeltaHeader(4, 10) + Bytes({0, 1, 0, 0, 0, 2, 0, 0, 0});

const ColumnLayout kBytes = Column(kByteArray, 0);

TEST_CASE("DELTA_LENGTH_BYTE_ARRAY decodes the spec's example", "[format][parquet]") {
  const std::string b = kHelloLengths + "HelloWorldFoobarABCDEF";
  CHECK(Values(kDeltaLengthByteArray, kBytes, b, 4) ==
        std::vector<std::string>{"Hello", "World", "Foobar", "ABCDEF"});
  // One byte short: the last value runs past the end.
  std::string error;
  Values(kDeltaLengthByteArray, kBytes, b.substr(0, b.size() - 1), 4, &error);
  CHECK(Has(error,
            "f.parquet: column 'c': page at offset 77: DELTA_LENGTH_BYTE_ARRAY value 3 of 6 "
            "bytes past the end at value byte " +
                std::to_string(kHelloLengths.size() + 16)));
  // A negative length (-1: zigzag 1).
  Values(kDeltaLengthByteArray, kBytes, DeltaHeader(1, 1), 1, &error);
  CHECK(Has(error, "DELTA_LENGTH_BYTE_ARRAY length of value 0 is negative (-1)"));
}

// "axis", "axle", "babble", "babyhood": prefix lengths 0,2,0,3 (deltas 2,-2,3: min -2, relative
// 4,0,5 on 3 bits: 44 01), suffix lengths 4,2,6,5 (first 4: zigzag 8; deltas -2,4,-1: min -2,
// relative 0,6,1 on 3 bits: 70 00), then the suffixes.
std::string AxisExample() {
  std::string b = DeltaHeader(4, 0) + Bytes({3, 3, 0, 0, 0, 0x44, 0x01});
  b += std::string(10, '\0');
  b += DeltaHeader(4, 8) + Bytes({3, 3, 0, 0, 0, 0x70, 0x00});
  b += std::string(10, '\0');
  return b + "axislebabbleyhood";
}

TEST_CASE("DELTA_BYTE_ARRAY decodes the spec's example and refuses lying prefixes",
          "[format][parquet]") {
  CHECK(Values(kDeltaByteArray, kBytes, AxisExample(), 4) ==
        std::vector<std::string>{"axis", "axle", "babble", "babyhood"});
  // "babble" claims a prefix of 5 of "axle"'s 4 bytes (its relative delta 5, not 0: 6c 01).
  std::string longer = AxisExample();
  longer[10] = '\x6c';
  std::string error;
  Values(kDeltaByteArray, kBytes, longer, 4, &error);
  CHECK(Has(error,
            "f.parquet: column 'c': page at offset 77: DELTA_BYTE_ARRAY value 2's prefix "
            "of 5 bytes is longer than the previous value's 4"));
  Values(kDeltaByteArray, kBytes, AxisExample(), 4, &error, 10);  // 4 + 4 + 6 bytes
  CHECK(Has(error, "DELTA_BYTE_ARRAY values exceed reader.max_decoded_bytes (10) at value 2"));
  // A FIXED_LEN_BYTE_ARRAY(4) column.
  Values(kDeltaByteArray, Column(kFixedLenByteArray, 4), AxisExample(), 4, &error);
  CHECK(Has(error, "DELTA_BYTE_ARRAY value 2 of 6 bytes in a column of 4-byte values"));
}

TEST_CASE("BYTE_STREAM_SPLIT gathers the spec's example", "[format][parquet]") {
  const std::string b =
      Bytes({0xaa, 0x00, 0xa3, 0xbb, 0x11, 0xb4, 0xcc, 0x22, 0xc5, 0xdd, 0x33, 0xd6});
  const ColumnLayout f = Column(kFloat, 4);
  CHECK(Values(kByteStreamSplit, f, b, 3) ==
        std::vector<std::string>{Bytes({0xaa, 0xbb, 0xcc, 0xdd}), Bytes({0x00, 0x11, 0x22, 0x33}),
                                 Bytes({0xa3, 0xb4, 0xc5, 0xd6})});
  // Streams that do not split into 4 equal ones, or hold fewer values than the page has.
  std::string error;
  Values(kByteStreamSplit, f, b.substr(0, 11), 3, &error);
  CHECK(Has(error,
            "f.parquet: column 'c': page at offset 77: BYTE_STREAM_SPLIT streams of 11 "
            "bytes for 3 values of 4 bytes"));
  Values(kByteStreamSplit, f, b, 4, &error);
  CHECK(Has(error, "streams of 12 bytes for 4 values of 4 bytes"));
}

const ColumnLayout kBool = Column(kBoolean, 1);

std::vector<std::string> Flags(std::initializer_list<int> v) {
  std::vector<std::string> out;
  for (int b : v) out.push_back(std::string(1, static_cast<char>(b)));
  return out;
}

TEST_CASE("BOOLEAN values PLAIN and RLE, one byte each", "[format][parquet]") {
  // PLAIN: LSB first, 0x4d = 1011 0010 read from bit 0, then 0x02.
  CHECK(Values(kPlain, kBool, Bytes({0x4d, 0x02}), 10) == Flags({1, 0, 1, 1, 0, 0, 1, 0, 0, 1}));
  // RLE: a 4-byte length (4), a run of three 1s (06 01), a bit-packed group 1,0,1,0,... (03 05).
  CHECK(Values(kRle, kBool, Bytes({4, 0, 0, 0, 0x06, 0x01, 0x03, 0x05}), 6) ==
        Flags({1, 1, 1, 1, 0, 1}));
  std::string error;
  Values(kPlain, kBool, Bytes({0xff}), 9, &error);
  CHECK(Has(error,
            "f.parquet: column 'c': page at offset 77: 9 bit-packed BOOLEAN values need 2 "
            "bytes, the page has 1"));
  Values(kRle, kBool, Bytes({9, 0, 0, 0, 0x06, 0x01}), 3, &error);
  CHECK(Has(error, "RLE BOOLEAN values of 9 bytes past the page end"));
}

TEST_CASE("OpenValues: each encoding for its types only", "[format][parquet]") {
  std::string error;
  Values(kDeltaBinaryPacked, Column(kFloat, 4), kExample2, 8, &error);
  CHECK(Has(error,
            "f.parquet: column 'c': page at offset 77: encoding DELTA_BINARY_PACKED is "
            "not defined for type FLOAT"));
  Values(kRle, Column(kInt32, 4), kExample2, 8, &error);
  CHECK(Has(error, "encoding RLE is not defined for type INT32"));
  auto alp =
      OpenValues(10, Column(kFloat, 4), AsBytes(kExample2), AsBytes(kExample2) + 4, 1, 1, kSite);
  CHECK(alp.status().code() == StatusCode::kUnimplemented);
  CHECK(Has(alp.status().ToString(), "page at offset 77: encoding ALP (10) is not supported"));
  // The spec's example 2 as INT32 and INT64 values: little-endian bytes.
  const std::vector<std::string> i32 = Values(kDeltaBinaryPacked, Column(kInt32, 4), kExample2, 8);
  REQUIRE(i32.size() == 8);
  CHECK(i32[0] == Bytes({7, 0, 0, 0}));
  CHECK(i32[7] == Bytes({5, 0, 0, 0}));
  CHECK(Values(kDeltaBinaryPacked, Column(kInt64, 8), kExample2, 8)[3] ==
        Bytes({1, 0, 0, 0, 0, 0, 0, 0}));
}

}  // namespace
}  // namespace dlio::format_internal::parquet
