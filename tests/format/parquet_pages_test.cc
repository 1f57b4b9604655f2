// parquet page decoding on hand-built bytes (parquet-format Encodings.md): the RLE / bit-packed
// hybrid, a dictionary-encoded OPTIONAL column, an OPTIONAL BOOLEAN column, pages whose numbers
// lie, and the LZ4 codecs (Compression.md).
#include "format/parquet/parquet_pages.h"

#include <lz4.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <vector>

#include "format/io_util.h"
#include "format/parquet/parquet_codec.h"
#include "format/parquet/parquet_meta.h"
#include "format/parquet/thrift_compact.h"

namespace dlio::format_internal::parquet {
namespace {

const uint8_t* U(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }

std::vector<uint32_t> Hybrid(const std::string& bytes, int width, uint64_t count) {
  std::vector<uint32_t> out;
  Status st = DecodeRleHybrid(U(bytes), U(bytes) + bytes.size(), width, count, &out, "f", 0);
  INFO(st.ToString());
  REQUIRE(st.ok());
  return out;
}

TEST_CASE("RLE / bit-packed hybrid runs decode as Encodings.md shows", "[format][parquet]") {
  // An RLE run: header 5 << 1, then the value in ceil(1 / 8) = 1 byte.
  CHECK(Hybrid(std::string("\x0a\x01", 2), 1, 5) == std::vector<uint32_t>{1, 1, 1, 1, 1});
  // Bit-packed, width 3, the spec's example 0..7: header (1 group << 1) | 1, bytes 88 c6 fa.
  CHECK(Hybrid(std::string("\x03\x88\xc6\xfa", 4), 3, 8) ==
        std::vector<uint32_t>{0, 1, 2, 3, 4, 5, 6, 7});
  // A bit-packed group of width 2 (8 values in 2 bytes) then an RLE run of two 2s.
  CHECK(Hybrid(std::string("\x03\x2d\x00\x04\x02", 5), 2, 10) ==
        std::vector<uint32_t>{1, 3, 2, 0, 0, 0, 0, 0, 2, 2});
  // The group's padding past `count` is ignored.
  CHECK(Hybrid(std::string("\x03\x2d\x00", 3), 2, 3) == std::vector<uint32_t>{1, 3, 2});
  std::vector<uint32_t> out;
  const std::string cut("\x05\xff", 2);  // 2 groups of width 1 announced, 1 byte there
  Status st = DecodeRleHybrid(U(cut), U(cut) + 2, 1, 16, &out, "f.parquet", 77);
  CHECK(st.ToString().find("f.parquet: page at offset 77: bit-packed run past the end") !=
        std::string::npos);
}

// A page header (v1 data page, or a dictionary page) as Thrift compact bytes.
std::string Header(int32_t type, int32_t size, int32_t num_values, int32_t encoding) {
  thrift::Writer w;
  w.I32(1, type);
  w.I32(2, size);
  w.I32(3, size);
  w.BeginStruct(type == kDictionaryPage ? 7 : 5);
  w.I32(1, num_values);
  w.I32(2, encoding);
  w.EndStruct();
  w.Finish();
  return w.bytes();
}

TEST_CASE("a dictionary-encoded OPTIONAL int32 chunk decodes to one slot per row",
          "[format][parquet]") {
  std::string dict;
  for (uint32_t v : {10u, 20u, 30u}) PutLe32(&dict, v);
  // Definition levels of 6 rows (1, 0, 1, 1, 0, 1: bit-packed 0x2d) with their 4-byte length,
  // then the index bit width (2) and the 4 indices 2, 0, 1, 2 bit-packed (0x92 0x00).
  std::string data;
  PutLe32(&data, 2);
  data += std::string("\x03\x2d", 2);
  data += std::string("\x02\x03\x92\x00", 4);
  const std::string dict_header =
      Header(kDictionaryPage, static_cast<int32_t>(dict.size()), 3, kPlain);
  const std::string chunk =
      dict_header + dict + Header(kDataPage, static_cast<int32_t>(data.size()), 6, kRleDictionary) +
      data;
  ColumnLayout col;
  col.name = "opt";
  col.width = 4;
  col.element.type = kInt32;
  col.element.repetition = kOptional;
  ChunkInfo info;
  info.column = &col;
  info.rows = 6;
  info.file_offset = 1000;
  info.chunk_uncompressed = chunk.size();
  info.max_decoded = 1 << 20;
  info.path = "d.parquet";
  auto d = DecodeChunk(info, U(chunk), chunk.size());
  INFO(d.status().ToString());
  REQUIRE(d.ok());
  REQUIRE(d->data.size() == 24);
  std::vector<uint32_t> rows(6);
  std::memcpy(rows.data(), d->data.data(), 24);
  CHECK(rows == std::vector<uint32_t>{30, 0, 10, 20, 0, 30});

  SECTION("an index past the dictionary") {
    std::string bad = chunk;
    bad[bad.size() - 2] = '\x93';  // first index 3
    auto e = DecodeChunk(info, U(bad), bad.size());
    REQUIRE_FALSE(e.ok());
    CHECK(e.status().ToString().find("d.parquet: column 'opt': page at offset " +
                                     std::to_string(1000 + dict_header.size() + dict.size()) +
                                     ": dictionary index 3 past 3 entries") != std::string::npos);
  }
  SECTION("more values than the row group has rows") {
    info.rows = 5;
    auto e = DecodeChunk(info, U(chunk), chunk.size());
    REQUIRE_FALSE(e.ok());
    CHECK(e.status().ToString().find("6 values past the row group's 5 rows") != std::string::npos);
  }
  SECTION("a page larger than the chunk's uncompressed size") {
    info.chunk_uncompressed = 8;
    auto e = DecodeChunk(info, U(chunk), chunk.size());
    REQUIRE_FALSE(e.ok());
    CHECK(e.status().ToString().find("d.parquet: column 'opt': page at offset 1000: uncompressed "
                                     "size 12 exceeds the chunk's 8 bytes") != std::string::npos);
  }
}

ColumnLayout FlatColumn(const char* name, int32_t type, uint64_t width, int32_t repetition) {
  ColumnLayout col;
  col.name = name;
  col.width = width;
  col.element.type = type;
  col.element.repetition = repetition;
  return col;
}

ChunkInfo OneColumnChunk(const ColumnLayout* col, uint64_t rows, const std::string& chunk) {
  ChunkInfo info;
  info.column = col;
  info.rows = rows;
  info.file_offset = 500;
  info.chunk_uncompressed = chunk.size();
  info.max_decoded = 1 << 20;
  info.path = "b.parquet";
  return info;
}

// Rows 0..n of a fixed-width column, read through DecodedColumn::Fixed, as int32 values.
std::vector<uint32_t> Int32Rows(const DecodedColumn& d, uint64_t n) {
  std::vector<uint32_t> rows(n);
  for (uint64_t r = 0; r < n; ++r) std::memcpy(&rows[r], d.Fixed(r, 4), 4);
  return rows;
}

TEST_CASE("PLAIN uncompressed pages without nulls stay in the chunk's bytes when allowed",
          "[format][parquet]") {
  // Two PLAIN pages of a REQUIRED int32 column: rows 0-2 (1, 2, 3), rows 3-4 (4, 5).
  std::string p1, p2;
  for (uint32_t v : {1u, 2u, 3u}) PutLe32(&p1, v);
  for (uint32_t v : {4u, 5u}) PutLe32(&p2, v);
  const std::string h1 = Header(kDataPage, 12, 3, kPlain);
  const std::string plain = h1 + p1 + Header(kDataPage, 8, 2, kPlain) + p2;
  ColumnLayout col = FlatColumn("v", kInt32, 4, kRequired);
  ChunkInfo info = OneColumnChunk(&col, 5, plain);

  SECTION("copied by default") {
    auto d = DecodeChunk(info, U(plain), plain.size());
    REQUIRE(d.ok());
    CHECK(d->spans.empty());
    CHECK(d->data.size() == 20);
    CHECK(Int32Rows(*d, 5) == std::vector<uint32_t>{1, 2, 3, 4, 5});
  }
  SECTION("in place: spans into the chunk, no copy") {
    info.in_place = true;
    auto d = DecodeChunk(info, U(plain), plain.size());
    REQUIRE(d.ok());
    CHECK(d->data.empty());
    REQUIRE(d->spans.size() == 2);
    CHECK(d->spans[0].first_row == 0);
    CHECK(d->spans[0].values == U(plain) + h1.size());
    CHECK(d->spans[1].first_row == 3);
    CHECK(Int32Rows(*d, 5) == std::vector<uint32_t>{1, 2, 3, 4, 5});
  }
  SECTION("in place until a page that cannot be: the rows so far are copied") {
    // A third page, dictionary-encoded (dictionary 7, 9; indices 1, 0 at bit width 1).
    std::string dict;
    for (uint32_t v : {7u, 9u}) PutLe32(&dict, v);
    const std::string idx("", 3);  // bit width 1, one bit-packed group: 1, 0
    const std::string chunk = Header(kDictionaryPage, 8, 2, kPlain) + dict + plain +
                              Header(kDataPage, 3, 2, kRleDictionary) + idx;
    ChunkInfo mixed = OneColumnChunk(&col, 7, chunk);
    mixed.in_place = true;
    auto d = DecodeChunk(mixed, U(chunk), chunk.size());
    INFO(d.status().ToString());
    REQUIRE(d.ok());
    CHECK(d->spans.empty());
    CHECK(d->data.size() == 28);
    CHECK(Int32Rows(*d, 7) == std::vector<uint32_t>{1, 2, 3, 4, 5, 9, 7});
  }
}

TEST_CASE("an OPTIONAL BOOLEAN chunk decodes to one byte per row", "[format][parquet]") {
  // 6 rows, definition levels 1,1,0,1,1,1 (bit-packed 0x3b), then 5 PLAIN bits 1,0,0,1,1 (0x19).
  std::string data;
  PutLe32(&data, 2);
  data += std::string("\x03\x3b\x19", 3);
  const std::string chunk = Header(kDataPage, static_cast<int32_t>(data.size()), 6, kPlain) + data;
  ColumnLayout col = FlatColumn("flag", kBoolean, 1, kOptional);
  auto d = DecodeChunk(OneColumnChunk(&col, 6, chunk), U(chunk), chunk.size());
  INFO(d.status().ToString());
  REQUIRE(d.ok());
  CHECK(std::vector<uint8_t>(d->data.begin(), d->data.end()) ==
        std::vector<uint8_t>{1, 0, 0, 0, 1, 1});
  // The same bits under a 6-value page of a REQUIRED column: only one byte for 6 values is fine,
  // 9 values are not.
  col.element.repetition = kRequired;
  const std::string nine = Header(kDataPage, 1, 9, kPlain) + "\x19";
  auto e = DecodeChunk(OneColumnChunk(&col, 9, nine), U(nine), nine.size());
  REQUIRE_FALSE(e.ok());
  CHECK(e.status().ToString().find("b.parquet: column 'flag': page at offset 500: 9 bit-packed "
                                   "BOOLEAN values need 2 bytes, the page has 1") !=
        std::string::npos);
}

TEST_CASE("a DELTA_BINARY_PACKED page with a lying bit width names column and page",
          "[format][parquet]") {
  // 2 values: header (128, 4 miniblocks, 2, first 0), min delta 0, widths 40,0,0,0.
  const std::string data("\x80\x01\x04\x02\x00\x00\x28\x00\x00\x00", 10);
  const std::string chunk =
      Header(kDataPage, static_cast<int32_t>(data.size()), 2, kDeltaBinaryPacked) + data;
  const ColumnLayout col = FlatColumn("n", kInt32, 4, kRequired);
  auto e = DecodeChunk(OneColumnChunk(&col, 2, chunk), U(chunk), chunk.size());
  REQUIRE_FALSE(e.ok());
  CHECK(e.status().code() == StatusCode::kCorruption);
  CHECK(e.status().ToString().find("b.parquet: column 'n': page at offset 500: "
                                   "DELTA_BINARY_PACKED miniblock bit width 40 exceeds the "
                                   "type's 32 bits at value byte 6") != std::string::npos);
}

std::string Lz4(const std::string& raw) {
  std::string out(static_cast<size_t>(LZ4_compressBound(static_cast<int>(raw.size()))), '\0');
  const int n = LZ4_compress_default(raw.data(), out.data(), static_cast<int>(raw.size()),
                                     static_cast<int>(out.size()));
  REQUIRE(n > 0);
  out.resize(static_cast<size_t>(n));
  return out;
}

void PutBe32(std::string* s, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) s->push_back(static_cast<char>(v >> shift));
}

TEST_CASE("LZ4_RAW pages, and LZ4 in Hadoop's framing or bare", "[format][parquet]") {
  const std::string a(300, 'a'), b = "the second block, 27 bytes.";
  const std::string raw = a + b;
  std::vector<uint8_t> out(raw.size());
  auto decompress = [&](int32_t codec, const std::string& bytes) {
    return DecompressPage(codec, U(bytes), bytes.size(), out.data(), out.size(), "z.parquet", 9);
  };
  const std::string block = Lz4(raw);
  REQUIRE(decompress(kLz4Raw, block).ok());
  CHECK(std::string(out.begin(), out.end()) == raw);
  // Hadoop: per block a big-endian uncompressed length, compressed length, then the block.
  std::string hadoop;
  for (const std::string& part : {a, b}) {
    const std::string c = Lz4(part);
    PutBe32(&hadoop, static_cast<uint32_t>(part.size()));
    PutBe32(&hadoop, static_cast<uint32_t>(c.size()));
    hadoop += c;
  }
  std::fill(out.begin(), out.end(), 0);
  REQUIRE(decompress(kLz4, hadoop).ok());
  CHECK(std::string(out.begin(), out.end()) == raw);
  std::fill(out.begin(), out.end(), 0);
  REQUIRE(decompress(kLz4, block).ok());  // a bare block under LZ4, as older writers stored it
  CHECK(std::string(out.begin(), out.end()) == raw);
  Status st = decompress(kLz4Raw, block.substr(0, block.size() - 3));
  CHECK(st.ToString().find("z.parquet: page at offset 9: LZ4_RAW data does not decompress to 327 "
                           "bytes") != std::string::npos);
  st = decompress(kLz4, hadoop.substr(0, hadoop.size() - 1));
  CHECK(st.ToString().find("z.parquet: page at offset 9: LZ4 data does not decompress to 327 "
                           "bytes") != std::string::npos);
}

}  // namespace
}  // namespace dlio::format_internal::parquet
