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

const uint8_t* U(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

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

std::vector<uint64_t> Delta(const std::string& b, uint64_t count, int bits, uint64_t* used) {
  std::vector<uint64_t> out;
  auto r = DecodeDeltaBinaryPacked(U(b), U(b) + b.size(), count, bits, &out, kSite);
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  *used = *r;
  return out;
}

std::string Error(const std::string& b, uint64_t count, int bits) {
  std::vector<uint64_t> out;
  auto r = DecodeDeltaBinaryPacked(U(b), U(b) + b.size(), count, bits, &out, kSite);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kCorruption);
  return r.status().ToString();
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

std::vector<std::string> Strings(const uint8_t* base, const std::vector<uint64_t>& offs) {
  std::vector<std::string> out;
  for (size_t k = 0; k + 1 < offs.size(); k += 2) {
    out.emplace_back(reinterpret_cast<const char*>(base) + offs[k], offs[k + 1] - offs[k]);
  }
  return out;
}

TEST_CASE("DELTA_LENGTH_BYTE_ARRAY decodes the spec's example", "[format][parquet]") {
  const std::string b = kHelloLengths + "HelloWorldFoobarABCDEF";
  std::vector<uint64_t> offs;
  auto used = DecodeDeltaLengthByteArray(U(b), U(b) + b.size(), 4, &offs, kSite);
  REQUIRE(used.ok());
  CHECK(*used == b.size());
  CHECK(Strings(U(b), offs) == std::vector<std::string>{"Hello", "World", "Foobar", "ABCDEF"});
  // One byte short: the last value runs past the end.
  auto cut = DecodeDeltaLengthByteArray(U(b), U(b) + b.size() - 1, 4, &offs, kSite);
  REQUIRE_FALSE(cut.ok());
  CHECK(Has(cut.status().ToString(),
            "f.parquet: column 'c': page at offset 77: DELTA_LENGTH_BYTE_ARRAY value 3 of 6 "
            "bytes past the end at value byte " +
                std::to_string(kHelloLengths.size() + 16)));
  // A negative length (-1: zigzag 1).
  const std::string neg = DeltaHeader(1, 1);
  auto n = DecodeDeltaLengthByteArray(U(neg), U(neg) + neg.size(), 1, &offs, kSite);
  REQUIRE_FALSE(n.ok());
  CHECK(Has(n.status().ToString(), "DELTA_LENGTH_BYTE_ARRAY length of value 0 is negative (-1)"));
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

Status DeltaStrings(const std::string& b, uint64_t fixed, uint64_t max,
                    std::vector<std::string>* v) {
  std::vector<uint8_t> bytes;
  std::vector<uint64_t> offs;
  DLIO_RETURN_NOT_OK(
      DecodeDeltaByteArray(U(b), U(b) + b.size(), 4, fixed, max, &bytes, &offs, kSite));
  *v = Strings(bytes.data(), offs);
  return Status::OK();
}

TEST_CASE("DELTA_BYTE_ARRAY decodes the spec's example and refuses lying prefixes",
          "[format][parquet]") {
  std::vector<std::string> v;
  REQUIRE(DeltaStrings(AxisExample(), 0, 1 << 20, &v).ok());
  CHECK(v == std::vector<std::string>{"axis", "axle", "babble", "babyhood"});
  // "babble" claims a prefix of 5 of "axle"'s 4 bytes (its relative delta 5, not 0: 6c 01).
  std::string longer = AxisExample();
  longer[10] = '\x6c';
  Status st = DeltaStrings(longer, 0, 1 << 20, &v);
  CHECK(Has(st.ToString(),
            "f.parquet: column 'c': page at offset 77: DELTA_BYTE_ARRAY value 2's "
            "prefix of 5 bytes is longer than the previous value's 4"));
  st = DeltaStrings(AxisExample(), 0, 10, &v);  // 4 + 4 + 6 bytes
  CHECK(Has(st.ToString(),
            "DELTA_BYTE_ARRAY values exceed reader.max_decoded_bytes (10) at value 2"));
  st = DeltaStrings(AxisExample(), 4, 1 << 20, &v);  // a FIXED_LEN_BYTE_ARRAY(4) column
  CHECK(Has(st.ToString(), "DELTA_BYTE_ARRAY value 2 of 6 bytes in a column of 4-byte values"));
}

TEST_CASE("BYTE_STREAM_SPLIT gathers the spec's example", "[format][parquet]") {
  const std::string b =
      Bytes({0xaa, 0x00, 0xa3, 0xbb, 0x11, 0xb4, 0xcc, 0x22, 0xc5, 0xdd, 0x33, 0xd6});
  std::vector<uint8_t> out;
  REQUIRE(DecodeByteStreamSplit(U(b), U(b) + b.size(), 3, 4, &out, kSite).ok());
  const std::string want =
      Bytes({0xaa, 0xbb, 0xcc, 0xdd, 0x00, 0x11, 0x22, 0x33, 0xa3, 0xb4, 0xc5, 0xd6});
  CHECK(std::string(out.begin(), out.end()) == want);
  // Streams that do not split into 4 equal ones, or hold fewer values than the page has.
  Status st = DecodeByteStreamSplit(U(b), U(b) + 11, 3, 4, &out, kSite);
  CHECK(Has(st.ToString(),
            "f.parquet: column 'c': page at offset 77: BYTE_STREAM_SPLIT streams "
            "of 11 bytes for 3 values of 4 bytes"));
  st = DecodeByteStreamSplit(U(b), U(b) + b.size(), 4, 4, &out, kSite);
  CHECK(Has(st.ToString(), "streams of 12 bytes for 4 values of 4 bytes"));
}

std::vector<uint8_t> Bools(const std::string& b, uint64_t count, bool rle) {
  std::vector<uint8_t> out;
  Status st = DecodeBooleans(U(b), U(b) + b.size(), count, rle, &out, kSite);
  INFO(st.ToString());
  REQUIRE(st.ok());
  return out;
}

TEST_CASE("BOOLEAN values PLAIN and RLE, one byte each", "[format][parquet]") {
  // PLAIN: LSB first, 0x4d = 1011 0010 read from bit 0, then 0x02.
  CHECK(Bools(Bytes({0x4d, 0x02}), 10, false) ==
        std::vector<uint8_t>{1, 0, 1, 1, 0, 0, 1, 0, 0, 1});
  // RLE: a 4-byte length (4), a run of three 1s (06 01), a bit-packed group 1,0,1,0,... (03 05).
  CHECK(Bools(Bytes({4, 0, 0, 0, 0x06, 0x01, 0x03, 0x05}), 6, true) ==
        std::vector<uint8_t>{1, 1, 1, 1, 0, 1});
  std::vector<uint8_t> out;
  const std::string one = Bytes({0xff});
  CHECK(Has(DecodeBooleans(U(one), U(one) + 1, 9, false, &out, kSite).ToString(),
            "f.parquet: column 'c': page at offset 77: 9 bit-packed BOOLEAN values need 2 bytes, "
            "the page has 1"));
  const std::string lying = Bytes({9, 0, 0, 0, 0x06, 0x01});
  CHECK(Has(DecodeBooleans(U(lying), U(lying) + lying.size(), 3, true, &out, kSite).ToString(),
            "RLE BOOLEAN values of 9 bytes past the page end"));
}

TEST_CASE("DecodeValues: each encoding for its types only", "[format][parquet]") {
  ColumnLayout c;
  c.name = "c";
  c.width = 4;
  c.element.type = kFloat;
  PageValues v;
  const std::string b = kExample2;
  Status st = DecodeValues(kDeltaBinaryPacked, c, U(b), U(b) + b.size(), 8, 1 << 20, &v, kSite);
  CHECK(st.code() == StatusCode::kCorruption);
  CHECK(Has(st.ToString(),
            "f.parquet: column 'c': page at offset 77: encoding "
            "DELTA_BINARY_PACKED is not defined for type FLOAT"));
  st = DecodeValues(10, c, U(b), U(b) + b.size(), 8, 1 << 20, &v, kSite);
  CHECK(st.code() == StatusCode::kUnimplemented);
  CHECK(Has(st.ToString(), "page at offset 77: encoding ALP (10) is not supported"));
  c.element.type = kInt32;  // the same bytes as INT32: little-endian values
  REQUIRE(DecodeValues(kDeltaBinaryPacked, c, U(b), U(b) + b.size(), 8, 1 << 20, &v, kSite).ok());
  CHECK(Le32(v.data) == 7);
  CHECK(Le32(v.data + 28) == 5);
  c.element.type = kBoolean;
  c.width = 1;
  REQUIRE(DecodeValues(kPlain, c, U(b), U(b) + b.size(), 3, 1 << 20, &v, kSite).ok());
  CHECK(std::vector<uint8_t>(v.data, v.data + 3) == std::vector<uint8_t>{0, 0, 0});  // 0x80
}

}  // namespace
}  // namespace dlio::format_internal::parquet
