// parquet: the page layout of dlio's writer, on cases computed by hand from Arrow's rules
// (parquet_chunk.h): write batches of 1,024 rows, a page cut after the batch that takes it to
// 1 MiB of values or 20,000 rows, dictionary fallback after the batch that takes the dictionary to
// 1 MiB; and the RLE / bit-packed hybrid the index pages use.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "format/format_test_util.h"
#include "format/parquet/parquet_dict.h"
#include "format/parquet/parquet_pages.h"
#include "format/parquet_test_util.h"

namespace dlio::testing {
namespace {

namespace pq = format_internal::parquet;

struct Page {
  int32_t type;
  int32_t num_values;
  int32_t encoding;
  int32_t size;  // uncompressed
};

// The pages of every chunk of `path` (row group 0), walked from the chunk's first page.
std::vector<std::vector<Page>> Pages(Storage* s, const std::string& path) {
  const ParquetLayout l = ReadParquetLayout(s, path);
  auto f = s->Open(path, OpenMode::kRead);
  REQUIRE(f.ok());
  std::vector<uint8_t> b(static_cast<size_t>(l.size));
  REQUIRE((*f)->ReadExactAt(0, b.size(), b.data()).ok());
  std::vector<std::vector<Page>> out;
  for (size_t c = 0; c < l.meta.row_groups[0].columns.size(); ++c) {
    const io_models::ByteRange r = l.Chunk(0, c);
    std::vector<Page> pages;
    for (uint64_t at = r.offset; at < r.offset + r.length;) {
      size_t used = 0;
      auto h = pq::DecodePageHeader(b.data() + at, b.size() - at, path, at, &used);
      REQUIRE(h.ok());
      pages.push_back({h->type, h->num_values, h->encoding, h->uncompressed_size});
      at += used + static_cast<uint64_t>(h->compressed_size);
    }
    out.push_back(pages);
  }
  return out;
}

FileSpec Rows(uint64_t n, uint64_t seed) {
  FileSpec spec;
  spec.sample_sizes.assign(n, 0);
  spec.seed = seed;
  return spec;
}

// Writes `rows` rows of `columns` in one row group, checks every row reads back, returns pages.
std::vector<std::vector<Page>> WriteOneGroup(const std::vector<ParquetColumnOptions>& columns,
                                             uint64_t rows, bool use_dictionary) {
  auto storage = BoundMemoryStorage();
  auto format = MakeFormatByName("parquet");
  FormatOptions o;
  ParquetOf(o).row_group_size = rows;
  ParquetOf(o).columns = columns;
  ParquetOf(o).use_dictionary = use_dictionary;
  REQUIRE(format->Write(storage.get(), "/l.parquet", Rows(rows, 11), o).ok());
  auto r = format->Open(storage.get(), "/l.parquet", o);
  REQUIRE(r.ok());
  SampleBuffer buf;
  for (uint64_t row : {uint64_t{0}, rows / 2, rows - 1}) {
    REQUIRE((*r)->ReadSample(row, &buf).ok());
    CHECK(BufferString(buf) == ExpectedRow(ParquetOf(o), 11, row));
  }
  return Pages(storage.get(), "/l.parquet");
}

void CheckPage(const Page& p, int32_t type, int32_t values, int32_t encoding) {
  CHECK(p.type == type);
  CHECK(p.num_values == values);
  CHECK(p.encoding == encoding);
}

TEST_CASE("parquet: a low-cardinality column keeps its dictionary", "[format][parquet]") {
  // int8: at most 256 distinct values of 4 bytes (INT32), far below the 1 MiB limit; 3,000 rows
  // are three batches and one page (20,000 rows or ~1 MiB of indices would cut it).
  const auto pages = WriteOneGroup({{"i8", "int8", 1, true}}, 3000, true);
  REQUIRE(pages[0].size() == 2);
  CHECK(pages[0][0].type == pq::kDictionaryPage);
  CHECK(pages[0][0].encoding == pq::kPlain);
  CHECK(pages[0][0].num_values > 200);
  CHECK(pages[0][0].num_values <= 256);
  CHECK(pages[0][0].size == 4 * pages[0][0].num_values);
  CheckPage(pages[0][1], pq::kDataPage, 3000, pq::kRleDictionary);
  // 8-bit indices (more than 128 entries), all literal: the bit-width byte, 5 runs of 512 values
  // (header 64 << 1 | 1, two ULEB128 bytes), one of 440 (55 << 1 | 1, one byte), 3,000 bytes.
  CHECK(pages[0][1].size == 1 + 5 * 2 + 1 + 3000);
}

TEST_CASE(
    "parquet: a high-cardinality column falls back to PLAIN after the batch that passes "
    "1 MiB",
    "[format][parquet]") {
  // int64, all distinct: 8 bytes a dictionary entry. Pages cut at 20,000 rows; batches end at
  // 1,024-row steps from each page start. The dictionary first reaches 1 MiB (131,072 entries) at
  // the batch ending at row 120,000 + 11 x 1,024 = 131,264: dictionary page of 131,264 entries,
  // index pages of 6 x 20,000 + 11,264 rows, then the remaining 18,736 rows PLAIN in one page.
  const auto pages = WriteOneGroup({{"x", "int64", 1, true}}, 150000, true);
  REQUIRE(pages[0].size() == 9);
  CheckPage(pages[0][0], pq::kDictionaryPage, 131264, pq::kPlain);
  CHECK(pages[0][0].size == 8 * 131264);
  for (int i = 1; i <= 6; ++i) CheckPage(pages[0][i], pq::kDataPage, 20000, pq::kRleDictionary);
  CheckPage(pages[0][7], pq::kDataPage, 11264, pq::kRleDictionary);
  CheckPage(pages[0][8], pq::kDataPage, 18736, pq::kPlain);
  CHECK(pages[0][8].size == 8 * 18736);
}

TEST_CASE("parquet: byte-array dictionaries count a 4-byte length per entry", "[format][parquet]") {
  // string of 60 letters: 64 bytes a dictionary entry, 1 MiB at 16,384 entries, the end of the
  // 16th batch. PLAIN pages after it hold 64 bytes a row: 1 MiB after 16 batches again.
  const auto pages = WriteOneGroup({{"s", "string", 60, true}}, 40000, true);
  REQUIRE(pages[0].size() == 4);
  CheckPage(pages[0][0], pq::kDictionaryPage, 16384, pq::kPlain);
  CheckPage(pages[0][1], pq::kDataPage, 16384, pq::kRleDictionary);
  CheckPage(pages[0][2], pq::kDataPage, 16384, pq::kPlain);
  CheckPage(pages[0][3], pq::kDataPage, 40000 - 2 * 16384, pq::kPlain);
}

TEST_CASE("parquet: PLAIN pages are cut after the write batch that reaches 1 MiB",
          "[format][parquet]") {
  // binary of 2,000 bytes: 2,004 PLAIN bytes a row, so every 1,024-row batch passes 1 MiB.
  const std::vector<ParquetColumnOptions> wide = {{"b", "binary", 2000, true}};
  SECTION("dictionary off: one page per batch") {
    const auto pages = WriteOneGroup(wide, 3000, false);
    REQUIRE(pages[0].size() == 3);
    CheckPage(pages[0][0], pq::kDataPage, 1024, pq::kPlain);
    CheckPage(pages[0][1], pq::kDataPage, 1024, pq::kPlain);
    CheckPage(pages[0][2], pq::kDataPage, 952, pq::kPlain);
  }
  SECTION("dictionary on: the first batch fills a 2 MiB dictionary, then PLAIN") {
    const auto pages = WriteOneGroup(wide, 3000, true);
    REQUIRE(pages[0].size() == 4);
    CheckPage(pages[0][0], pq::kDictionaryPage, 1024, pq::kPlain);
    CHECK(pages[0][0].size == 1024 * 2004);
    CheckPage(pages[0][1], pq::kDataPage, 1024, pq::kRleDictionary);
    CheckPage(pages[0][2], pq::kDataPage, 1024, pq::kPlain);
    CheckPage(pages[0][3], pq::kDataPage, 952, pq::kPlain);
  }
}

TEST_CASE("parquet: list columns are PLAIN, batched by 1,024 list values", "[format][parquet]") {
  for (const bool dictionary : {true, false}) {
    INFO("use_dictionary " << dictionary);
    // float32 x 512: batches of ceil(1024 / 512) = 2 rows of 2,048 bytes; 1 MiB after 512 rows.
    const auto pages = WriteOneGroup({{"v", "float32", 512, true}}, 3000, dictionary);
    REQUIRE(pages[0].size() == 6);
    for (int i = 0; i < 5; ++i) CheckPage(pages[0][i], pq::kDataPage, 512, pq::kPlain);
    CheckPage(pages[0][5], pq::kDataPage, 440, pq::kPlain);
  }
  // The legacy data column, a list of 300 uint8: batches of ceil(1024 / 300) = 4 rows (1,200
  // bytes); 1 MiB after 874 batches, 3,496 rows.
  auto storage = BoundMemoryStorage();
  auto format = MakeFormatByName("parquet");
  FormatOptions o;
  ParquetOf(o).row_group_size = 10000;
  FileSpec spec = Rows(10000, 4);
  spec.sample_sizes.assign(10000, 300);
  REQUIRE(format->Write(storage.get(), "/d.parquet", spec, o).ok());
  const auto pages = Pages(storage.get(), "/d.parquet");
  REQUIRE(pages[0].size() == 3);
  CheckPage(pages[0][0], pq::kDataPage, 3496, pq::kPlain);
  CheckPage(pages[0][1], pq::kDataPage, 3496, pq::kPlain);
  CheckPage(pages[0][2], pq::kDataPage, 10000 - 2 * 3496, pq::kPlain);
}

TEST_CASE("parquet: the chunk's footer entries follow its pages", "[format][parquet]") {
  auto storage = BoundMemoryStorage();
  auto format = MakeFormatByName("parquet");
  FormatOptions o;
  ParquetOf(o).row_group_size = 100;
  ParquetOf(o).columns = {{"a", "int8", 1, true}, {"b", "float64", 1, true}};
  REQUIRE(format->Write(storage.get(), "/f.parquet", Rows(250, 3), o).ok());
  const ParquetLayout l = ReadParquetLayout(storage.get(), "/f.parquet");
  REQUIRE(l.meta.row_groups.size() == 3);
  int64_t next = 4;  // after "PAR1"
  for (const pq::RowGroup& g : l.meta.row_groups) {
    for (const pq::ColumnChunk& c : g.columns) {
      CHECK(c.meta.dictionary_page_offset == next);
      CHECK(c.file_offset == next);
      CHECK(c.meta.data_page_offset > next);
      CHECK(c.meta.encodings == std::vector<int32_t>{pq::kPlain, pq::kRle, pq::kRleDictionary});
      next += c.meta.total_compressed_size;
    }
  }
  ParquetOf(o).use_dictionary = false;
  REQUIRE(format->Write(storage.get(), "/p.parquet", Rows(250, 3), o).ok());
  const ParquetLayout p = ReadParquetLayout(storage.get(), "/p.parquet");
  const pq::ColumnMetaData& m = p.meta.row_groups[0].columns[0].meta;
  CHECK(m.dictionary_page_offset == -1);
  CHECK(m.data_page_offset == 4);
  CHECK(m.encodings == std::vector<int32_t>{pq::kRle, pq::kPlain});
}

std::vector<int64_t> GroupRows(const FormatOptions& o, uint64_t rows) {
  auto storage = BoundMemoryStorage();
  REQUIRE(MakeFormatByName("parquet")->Write(storage.get(), "/g.parquet", Rows(rows, 1), o).ok());
  std::vector<int64_t> out;
  for (const pq::RowGroup& g : ReadParquetLayout(storage.get(), "/g.parquet").meta.row_groups) {
    out.push_back(g.num_rows);
  }
  return out;
}

TEST_CASE("parquet row groups end at generation batches and at Arrow's 1 Mi rows",
          "[format][parquet]") {
  FormatOptions o;
  ParquetOf(o).columns = {{"b", "int8", 1, true}};
  ParquetOf(o).row_group_size = 4;
  ParquetOf(o).generation_batch_size = 6;  // write_table(6 rows, row_group_size=4): groups 4, 2
  CHECK(GroupRows(o, 14) == std::vector<int64_t>{4, 2, 4, 2, 2});
  ParquetOf(o).generation_batch_size = 0;  // one batch a row group
  CHECK(GroupRows(o, 14) == std::vector<int64_t>{4, 4, 4, 2});
  // WriteTable caps a row group at max_row_group_length (DEFAULT_MAX_ROW_GROUP_LENGTH).
  ParquetOf(o).row_group_size = uint64_t{1} << 21;
  CHECK(GroupRows(o, (uint64_t{1} << 20) + 3) == std::vector<int64_t>{int64_t{1} << 20, 3});
}

TEST_CASE("parquet: the RLE / bit-packed hybrid our writer makes", "[format][parquet]") {
  // Eight 3s are a repeated run (header 8 << 1, one value byte); 1, 2 a literal run of one group
  // (header 1 << 1 | 1), bit-packed LSB first at 2 bits (1 | 2 << 2 = 0x09) and zero-padded.
  std::string out;
  pq::EncodeRleHybrid({3, 3, 3, 3, 3, 3, 3, 3, 1, 2}, 2, &out);
  CHECK(out == std::string("\x10\x03\x03\x09\x00", 5));
  CHECK(pq::IndexBitWidth(0) == 0);
  CHECK(pq::IndexBitWidth(1) == 1);
  CHECK(pq::IndexBitWidth(2) == 1);
  CHECK(pq::IndexBitWidth(257) == 9);
  // A long mixed stream decodes back: literal runs capped at 512 values, runs inside literals.
  std::vector<uint32_t> v;
  for (uint32_t i = 0; i < 3000; ++i) v.push_back(i % 700 < 600 ? (i * 2654435761u) % 1000 : 7);
  out.clear();
  pq::EncodeRleHybrid(v, 10, &out);
  std::vector<uint32_t> back;
  const auto* p = reinterpret_cast<const uint8_t*>(out.data());
  REQUIRE(pq::DecodeRleHybrid(p, p + out.size(), 10, v.size(), &back, "x", 0).ok());
  CHECK(back == v);
}

}  // namespace
}  // namespace dlio::testing
