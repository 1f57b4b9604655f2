// reader.io_model pyarrow: the requests of pyarrow.parquet as MLPerf's DLIO fork calls it
// (io_models/pyarrow_read.h, docs/io_models.md "pyarrow"), row by row against expectations worked
// out here from arrow's rules and the chunk ranges in the file's own footer.
#include <catch2/catch.hpp>

#include "format/format_test_util.h"
#include "format/io_util.h"
#include "format/parquet/parquet_meta.h"
#include "format/parquet_test_util.h"
#include "io_models/pyarrow_read.h"
#include "test_util.h"

namespace dlio::testing {
namespace {

namespace pq = format_internal::parquet;
using Reads = std::vector<std::pair<uint64_t, size_t>>;
using io_models::ByteRange;
using Layout = ParquetLayout;

FileSpec Rows(uint64_t n) {
  FileSpec spec;
  spec.sample_sizes.assign(n, 0);
  spec.seed = 7;
  return spec;
}

struct Fixture {
  ReadLog log{BoundMemoryStorage()};
  std::unique_ptr<Format> format = MakeFormatByName("parquet");
  FormatOptions o;
  Layout layout;

  Fixture(std::vector<ParquetColumnOptions> columns, uint64_t rows, uint64_t group,
          bool use_dictionary = true) {
    ParquetOf(o).row_group_size = group;
    ParquetOf(o).use_dictionary = use_dictionary;
    ParquetOf(o).columns = std::move(columns);
    REQUIRE(format->Write(&log, "/f.parquet", Rows(rows), o).ok());
    layout = ReadParquetLayout(&log, "/f.parquet");
    log.Take();
  }
  // Opens under `mode`; the open's reads go to *open_reads; then reads every row.
  Reads ReadAll(PyarrowRead mode, Reads* open_reads, int* opens = nullptr) {
    o.io_model = IoModel::kAuto;  // parquet's default model is pyarrow
    ParquetOf(o).pyarrow_read = mode;
    auto r = format->Open(&log, "/f.parquet", o);
    REQUIRE(r.ok());
    *open_reads = log.Take();
    SampleBuffer buf;
    for (uint64_t i = 0; i < (*r)->num_samples(); ++i) {
      REQUIRE((*r)->ReadSample(i, &buf).ok());
      REQUIRE(BufferString(buf) == ExpectedRow(ParquetOf(o), 7, i));
    }
    if (opens != nullptr) *opens = log.opens();
    return log.Take();
  }
};

std::pair<uint64_t, size_t> Req(uint64_t offset, uint64_t n) {
  return {offset, static_cast<size_t>(n)};
}

// dlrm-like: four columns, b and d read, a and c (small) between them not.
std::vector<ParquetColumnOptions> DlrmLike(uint64_t c_size) {
  return {{"a", "float32", 1, false},
          {"b", "float64", 4, true},
          {"c", "float64", c_size, false},
          {"d", "int32", 2, true}};
}

}  // namespace

TEST_CASE("pyarrow reads a small file's footer in one read of the whole file",
          "[io_model][pyarrow]") {
  Fixture f(DlrmLike(1), 30, 10);
  REQUIRE(f.layout.size < io_models::kPyarrowFooterReadSize);
  Reads open;
  f.ReadAll(PyarrowRead::kColumns, &open);
  CHECK(open == Reads{Req(0, f.layout.size)});  // min(size, 64 KiB) from the end
}

TEST_CASE("pyarrow reads a footer larger than 64 KiB again, whole", "[io_model][pyarrow]") {
  std::vector<ParquetColumnOptions> cols;
  for (int c = 0; c < 300; ++c) cols.push_back({"col" + std::to_string(c), "int8", 1, c == 0});
  Fixture f(cols, 8, 1);  // 2,400 chunks in the footer
  REQUIRE(f.layout.footer_len + 8 > io_models::kPyarrowFooterReadSize);
  Reads open;
  f.ReadAll(PyarrowRead::kColumns, &open);
  const uint64_t tail = io_models::kPyarrowFooterReadSize;
  CHECK(open == Reads{Req(f.layout.size - tail, tail),
                      Req(f.layout.size - 8 - f.layout.footer_len, f.layout.footer_len)});
}

TEST_CASE("pyarrow columns: one read per selected chunk per row group, nothing else",
          "[io_model][pyarrow]") {
  // PLAIN, so a chunk is its values' bytes and a page header (the share check below).
  Fixture f(DlrmLike(1), 30, 10, false);
  Reads open;
  const Reads reads = f.ReadAll(PyarrowRead::kColumns, &open);
  Reads want;
  uint64_t selected = 0, all = 0;
  for (size_t g = 0; g < 3; ++g) {
    for (size_t c : {1, 3}) {
      const ByteRange r = f.layout.Chunk(g, c);
      want.push_back(Req(r.offset, r.length));
      selected += r.length;
    }
    for (size_t c = 0; c < 4; ++c) all += f.layout.Chunk(g, c).length;
  }
  CHECK(reads == want);
  // b (32 B a row) and d (8 B) of 52 B a row: the bytes read are the selected columns' share.
  CHECK(static_cast<double>(selected) / static_cast<double>(all) ==
        Approx(40.0 / 52.0).margin(0.08));
}

TEST_CASE("pyarrow reads a dictionary-encoded chunk from its dictionary page",
          "[io_model][pyarrow]") {
  Fixture f({{"x", "int64", 1, true}}, 30, 10);
  Reads open;
  const Reads reads = f.ReadAll(PyarrowRead::kColumns, &open);
  Reads want;
  for (size_t g = 0; g < 3; ++g) {
    const auto& m = f.layout.meta.row_groups[g].columns[0].meta;
    REQUIRE(m.dictionary_page_offset > 0);
    CHECK(m.dictionary_page_offset < m.data_page_offset);
    want.push_back(Req(static_cast<uint64_t>(m.dictionary_page_offset),
                       static_cast<uint64_t>(m.total_compressed_size)));
  }
  CHECK(reads == want);
}

TEST_CASE("pyarrow pre_buffer coalesces chunks across holes of at most 8 KiB",
          "[io_model][pyarrow]") {
  // Column c between b and d: 10 rows x 8 B is a small hole, read through; 10 rows x 1,600 B is
  // over 8 KiB and splits the row group's reads.
  for (const uint64_t c_size : {uint64_t{1}, uint64_t{200}}) {
    INFO("c of " << c_size << " values a row");
    Fixture f(DlrmLike(c_size), 30, 10);
    Reads open;
    const Reads reads = f.ReadAll(PyarrowRead::kPreBuffer, &open);
    Reads want;
    for (size_t g = 0; g < 3; ++g) {
      const ByteRange b = f.layout.Chunk(g, 1), d = f.layout.Chunk(g, 3);
      const bool merged = d.offset - (b.offset + b.length) <= io_models::kArrowHoleSizeLimit;
      REQUIRE(merged == (c_size == 1));
      if (merged) {
        want.push_back(Req(b.offset, d.offset + d.length - b.offset));
      } else {
        want.push_back(Req(b.offset, b.length));
        want.push_back(Req(d.offset, d.length));
      }
    }
    CHECK(reads == want);
  }
}

TEST_CASE("pyarrow fork: a buffered Python read of the selected span, the file opened per group",
          "[io_model][pyarrow]") {
  // c of 10 rows x 1,600 B puts the span of b..d past 16 KiB: io.BufferedReader reads the whole
  // 4 KiB blocks of it straight into the result, then fills its 4 KiB buffer once for the rest.
  Fixture f(DlrmLike(200), 30, 10);
  Reads open;
  int opens = 0;
  const Reads reads = f.ReadAll(PyarrowRead::kFork, &open, &opens);
  CHECK(open == Reads{Req(0, f.layout.size)});
  Reads want;
  for (size_t g = 0; g < 3; ++g) {
    const ByteRange b = f.layout.Chunk(g, 1), d = f.layout.Chunk(g, 3);
    const uint64_t span = d.offset + d.length - b.offset;
    const uint64_t whole = span / 4096 * 4096;
    REQUIRE(whole > 0);
    want.push_back(Req(b.offset, whole));
    if (span != whole) want.push_back(Req(b.offset + whole, 4096));
  }
  CHECK(reads == want);
  CHECK(opens == 3);  // `with open(filename, "rb")` per row group
}

TEST_CASE("pyarrow flux-like: every column read, so whole row groups", "[io_model][pyarrow]") {
  Fixture f({{"t5", "float32", 64, true}, {"clip", "float32", 8, true}, {"ts", "float32", 7, true}},
            12, 4);
  for (PyarrowRead mode : {PyarrowRead::kColumns, PyarrowRead::kPreBuffer}) {
    Reads open;
    const Reads reads = f.ReadAll(mode, &open);
    uint64_t bytes = 0;
    for (const auto& r : reads) bytes += r.second;
    uint64_t groups = 0;
    for (size_t g = 0; g < 3; ++g) {
      for (size_t c = 0; c < 3; ++c) groups += f.layout.Chunk(g, c).length;
    }
    CHECK(bytes == groups);
    // Adjacent chunks (no hole) coalesce into one read per row group.
    CHECK(reads.size() == (mode == PyarrowRead::kColumns ? 9u : 3u));
  }
}

TEST_CASE("CoalesceReadRanges follows arrow's rules", "[io_model][pyarrow]") {
  using io_models::CoalesceReadRanges;
  using V = std::vector<ByteRange>;
  // Unsorted input, an empty range and a range inside the one before are dropped.
  CHECK(CoalesceReadRanges({{100, 10}, {0, 10}, {50, 0}, {102, 3}}, 8192, 1 << 20) == V{{0, 110}});
  // Hole exactly at the limit joins; one byte more does not.
  CHECK(CoalesceReadRanges({{0, 10}, {8202, 10}}, 8192, 1 << 20) == V{{0, 8212}});
  CHECK(CoalesceReadRanges({{0, 10}, {8203, 10}}, 8192, 1 << 20) == V{{0, 10}, {8203, 10}});
  // The size limit stops a merge; a single range above it stays whole.
  CHECK(CoalesceReadRanges({{0, 600}, {600, 600}}, 8192, 1000) == V{{0, 600}, {600, 600}});
  CHECK(CoalesceReadRanges({{0, 5000}, {5000, 10}}, 8192, 1000) == V{{0, 5000}, {5000, 10}});
}

}  // namespace dlio::testing
