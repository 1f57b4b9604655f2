// parquet: writer -> reader round trips of every column kind and codec, the column selection's
// reads, and files whose footer or pages lie (each error names the file and the offset).
#include <catch2/catch.hpp>
#include <cstring>
#include <mutex>
#include <thread>

#include "dlio/storage_wrapper.h"
#include "format/format_test_util.h"
#include "format/io_util.h"
#include "format/parquet/parquet_meta.h"
#include "format/parquet_test_util.h"
#include "test_util.h"

namespace dlio::testing {
namespace {

namespace pq = format_internal::parquet;

FileSpec Rows(uint64_t n, uint64_t size, uint64_t seed) {
  FileSpec spec;
  spec.sample_sizes.assign(n, size);
  spec.seed = seed;
  return spec;
}

void ExpectRows(FormatReader* r, const ParquetOptions& po, uint64_t seed, uint64_t size = 0) {
  SampleBuffer buf;
  for (uint64_t i : {uint64_t{0}, r->num_samples() - 1, r->num_samples() / 2, uint64_t{1}}) {
    Status st = r->ReadSample(i, &buf);
    INFO("row " << i << ": " << st.ToString());
    REQUIRE(st.ok());
    REQUIRE(BufferString(buf) == ExpectedRow(po, seed, i, size));
    CHECK(r->sample_size(i) == buf.size());
  }
}

TEST_CASE("parquet round-trips every column kind with every codec", "[format][parquet]") {
  auto storage = BoundMemoryStorage();
  auto format = MakeFormatByName("parquet");
  REQUIRE(format != nullptr);
  for (const char* codec : {"none", "snappy", "gzip", "zstd"}) {
    INFO("codec " << codec);
    const FormatOptions o = AllKindsOptions(codec, 7);
    const std::string path = std::string("/t_") + codec + ".parquet";
    REQUIRE(format->Write(storage.get(), path, Rows(50, 0, 42), o).ok());
    auto r = format->Open(storage.get(), path, o);
    REQUIRE(r.ok());
    CHECK((*r)->num_samples() == 50);
    ExpectRows(r->get(), ParquetOf(o), 42);
    const std::string desc = (*r)->DescribeJson();
    CHECK(desc.find("\"count\":8") != std::string::npos);  // 7 x 7 rows + 1
    CHECK(desc.find(std::string("\"codec\":\"") + (codec == std::string("none")     ? "UNCOMPRESSED"
                                                   : codec == std::string("snappy") ? "SNAPPY"
                                                   : codec == std::string("gzip")   ? "GZIP"
                                                                                    : "ZSTD")) !=
          std::string::npos);
  }
}

TEST_CASE("parquet without columns stores each sample as one fixed_len_byte_array",
          "[format][parquet]") {
  auto storage = BoundMemoryStorage();
  auto format = MakeFormatByName("parquet");
  FormatOptions o;
  FileSpec spec = Rows(20, 300, 9);
  REQUIRE(format->Write(storage.get(), "/d.parquet", spec, o).ok());
  auto r = format->Open(storage.get(), "/d.parquet", o);
  REQUIRE(r.ok());
  ExpectRows(r->get(), ParquetOf(o), 9, 300);
  // A page holds at least one row: a sample larger than a page is still one value.
  FileSpec big = Rows(3, (1u << 20) + 5, 10);
  REQUIRE(format->Write(storage.get(), "/big.parquet", big, o).ok());
  auto rb = format->Open(storage.get(), "/big.parquet", o);
  REQUIRE(rb.ok());
  ExpectRows(rb->get(), ParquetOf(o), 10, (1u << 20) + 5);
}

TEST_CASE("parquet reads only the selected columns' chunks, once per row group",
          "[format][parquet]") {
  ReadLog log(BoundMemoryStorage());
  auto format = MakeFormatByName("parquet");
  FormatOptions o;
  o.io_model = IoModel::kNative;  // pyarrow's: parquet_pyarrow_test.cc
  ParquetOf(o).row_group_size = 10;
  ParquetOf(o).columns = {
      {"a", "float32", 1, false}, {"b", "float64", 4, true}, {"c", "int32", 1, false}};
  REQUIRE(format->Write(&log, "/s.parquet", Rows(30, 0, 1), o).ok());
  log.Take();
  auto r = format->Open(&log, "/s.parquet", o);
  REQUIRE(r.ok());
  auto open_reads = log.Take();
  REQUIRE(open_reads.size() == 2);  // the tail, then the footer
  CHECK(open_reads[0].second == 8);
  SampleBuffer buf;
  for (uint64_t i = 0; i < 30; ++i) REQUIRE((*r)->ReadSample(i, &buf).ok());
  auto reads = log.Take();
  // One read per row group, of column b's chunk: a list column, so PLAIN (no dictionary), 10 rows
  // x 32 bytes plus its page header.
  REQUIRE(reads.size() == 3);
  for (const auto& rd : reads) {
    CHECK(rd.second > 320);
    CHECK(rd.second < 360);
  }
  CHECK(buf.size() == 32);
}

TEST_CASE("parquet hands a row of one column as a view when the caller reads no byte",
          "[format][parquet]") {
  const std::string codec = GENERATE(as<std::string>{}, "none", "snappy");
  const int columns = GENERATE(0, 1, 2);  // the sample's bytes; one column of many; many
  CAPTURE(codec, columns);
  ReadLog log(BoundMemoryStorage());
  auto format = MakeFormatByName("parquet");
  FormatOptions o;
  o.compression = codec;
  o.io_model = IoModel::kNative;
  ParquetOf(o).row_group_size = 10;
  if (columns > 0) ParquetOf(o).columns = AllKindsColumns();
  if (columns == 1) {
    for (auto& c : ParquetOf(o).columns) c.read = c.name == "blob";  // variable-length values
  }
  REQUIRE(format->Write(&log, "/v.parquet", Rows(60, 100, 5), o).ok());  // 6 groups
  auto read_all = [&](bool views, std::vector<std::string>* rows) {
    log.Take();
    auto r = format->Open(&log, "/v.parquet", o);
    REQUIRE(r.ok());
    SampleBuffer buf;
    buf.set_views_allowed(views);
    for (uint64_t i = 0; i < 60; ++i) {
      REQUIRE((*r)->ReadSample(i, &buf).ok());
      CHECK(buf.has_view() == (views && columns < 2));
      CHECK(buf.size() == (*r)->sample_size(i));
      rows->push_back(BufferString(buf));
    }
    return log.Take();
  };
  std::vector<std::string> copied, viewed;
  const auto copy_reads = read_all(false, &copied);
  const auto view_reads = read_all(true, &viewed);
  CHECK(view_reads == copy_reads);  // the same requests, in the same order
  REQUIRE(viewed == copied);
  CHECK(copied[7] == ExpectedRow(ParquetOf(o), 5, 7, 100));

  // A view keeps its row group alive after the reader's cache dropped it.
  auto r = format->Open(&log, "/v.parquet", o);
  REQUIRE(r.ok());
  SampleBuffer view, other;
  view.set_views_allowed(true);
  REQUIRE((*r)->ReadSample(3, &view).ok());
  for (uint64_t i = 10; i < 60; i += 10) REQUIRE((*r)->ReadSample(i, &other).ok());
  CHECK(BufferString(view) == copied[3]);
  REQUIRE(view.Resize(4).ok());  // the buffer's own memory again
  CHECK_FALSE(view.has_view());
  CHECK(view.size() == 4);
}

TEST_CASE("parquet serves rows of the group a view holds as a locked lookup would",
          "[format][parquet]") {
  // Buffers that alternate between groups, and threads that read the same file at once, get
  // the same rows as copies, and storage the same requests as reads one buffer at a time make.
  ReadLog log(BoundMemoryStorage());
  auto format = MakeFormatByName("parquet");
  FormatOptions o;
  o.io_model = IoModel::kNative;
  ParquetOf(o).row_group_size = 8;
  REQUIRE(format->Write(&log, "/h.parquet", Rows(80, 40, 3), o).ok());  // 10 groups
  std::vector<std::string> expected;
  for (uint64_t i = 0; i < 80; ++i) expected.push_back(ExpectedRow(ParquetOf(o), 3, i, 40));

  // Two buffers taking turns, a in group g while b is in group g + 5: neither's group is the
  // cache's most recent when its turn comes, so each row takes the locked lookup, which keeps
  // both groups cached (the same requests as before the views' fast path: one per group).
  log.Take();
  auto r = format->Open(&log, "/h.parquet", o);
  REQUIRE(r.ok());
  const auto open_reads = log.Take();
  SampleBuffer a, b;
  a.set_views_allowed(true);
  b.set_views_allowed(true);
  for (uint64_t i = 0; i < 40; ++i) {
    REQUIRE((*r)->ReadSample(i, &a).ok());
    CHECK(BufferString(a) == expected[i]);
    REQUIRE((*r)->ReadSample(i + 40, &b).ok());
    CHECK(BufferString(b) == expected[i + 40]);
  }
  const auto turns = log.Take();
  CHECK(turns.size() == 10);
  CHECK(open_reads.size() == 2);

  // Four threads reading every row of one reader at once, each in its own buffer.
  auto shared = format->Open(&log, "/h.parquet", o);
  REQUIRE(shared.ok());
  std::vector<std::string> bad(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      SampleBuffer buf;
      buf.set_views_allowed(t % 2 == 0);
      for (uint64_t i = 0; i < 80; ++i) {
        const uint64_t row = (i + t * 20) % 80;
        if (!(*shared)->ReadSample(row, &buf).ok() || BufferString(buf) != expected[row]) {
          bad[t] += std::to_string(row) + " ";
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(bad == std::vector<std::string>(4));
}

// --- corrupt files ------------------------------------------------------------------------------

std::string FileBytes(Storage* s, const std::string& path) {
  auto f = s->Open(path, OpenMode::kRead);
  std::string b(static_cast<size_t>((*f)->Size().value()), '\0');
  REQUIRE((*f)->ReadExactAt(0, b.size(), b.data()).ok());
  return b;
}

void PutBytes(Storage* s, const std::string& path, const std::string& bytes) {
  (void)s->Remove(path);
  auto f = s->Open(path, OpenMode::kCreateNew);
  REQUIRE(f.ok());
  REQUIRE((*f)->WriteAt(0, bytes.data(), bytes.size()).ok());
  REQUIRE((*f)->Close().ok());
}

// A file whose footer is `meta` (re-encoded) after the data of `good`.
std::string WithFooter(const std::string& good, const pq::FileMetaData& meta) {
  const uint32_t old_len =
      format_internal::Le32(reinterpret_cast<const uint8_t*>(good.data() + good.size() - 8));
  std::string out = good.substr(0, good.size() - 8 - old_len);
  std::string footer = pq::EncodeFileMetaData(meta);
  out += footer;
  format_internal::PutLe32(&out, static_cast<uint32_t>(footer.size()));
  out += "PAR1";
  return out;
}

pq::FileMetaData FooterOf(const std::string& good) {
  const uint32_t len =
      format_internal::Le32(reinterpret_cast<const uint8_t*>(good.data() + good.size() - 8));
  const size_t begin = good.size() - 8 - len;
  return pq::DecodeFileMetaData(reinterpret_cast<const uint8_t*>(good.data() + begin), len, "g",
                                begin)
      .value();
}

std::string OpenError(Storage* s, const Format& f, const std::string& path,
                      const FormatOptions& o) {
  auto r = f.Open(s, path, o);
  if (!r.ok()) return r.status().ToString();
  SampleBuffer buf;
  for (uint64_t i = 0; i < (*r)->num_samples(); ++i) {
    Status st = (*r)->ReadSample(i, &buf);
    if (!st.ok()) return st.ToString();
  }
  return "";
}

bool Has(const std::string& s, const std::string& part) {
  INFO(s);
  return s.find(part) != std::string::npos;
}

TEST_CASE("parquet refuses corrupt footers and lying lengths, naming file and offset",
          "[format][parquet]") {
  auto storage = BoundMemoryStorage();
  auto format = MakeFormatByName("parquet");
  FormatOptions o;
  ParquetOf(o).row_group_size = 5;
  ParquetOf(o).use_dictionary = false;  // the sections edit PLAIN pages: the first one at offset 4
  ParquetOf(o).columns = {{"x", "int64", 1, true}, {"y", "float32", 2, true}};
  REQUIRE(format->Write(storage.get(), "/g.parquet", Rows(12, 0, 3), o).ok());
  const std::string good = FileBytes(storage.get(), "/g.parquet");
  const uint64_t n = good.size();
  const uint32_t flen =
      format_internal::Le32(reinterpret_cast<const uint8_t*>(good.data() + n - 8));
  const uint64_t fbegin = n - 8 - flen;
  const std::string p = "/bad.parquet";

  SECTION("too short") {
    PutBytes(storage.get(), p, "PAR1PAR1");
    CHECK(Has(OpenError(storage.get(), *format, p, o), "/bad.parquet: 8 bytes are too few"));
  }
  SECTION("bad tail magic") {
    std::string b = good;
    b[n - 1] = 'X';
    PutBytes(storage.get(), p, b);
    CHECK(Has(OpenError(storage.get(), *format, p, o),
              "/bad.parquet: no PAR1 magic at offset " + std::to_string(n - 4)));
  }
  SECTION("footer length past the file") {
    std::string b = good;
    b[n - 5] = '\x7f';  // length's top byte
    PutBytes(storage.get(), p, b);
    CHECK(Has(OpenError(storage.get(), *format, p, o),
              "at offset " + std::to_string(n - 8) + " does not fit the file's"));
  }
  SECTION("footer bytes that do not parse") {
    std::string b = good;
    b[fbegin] = '\x0d';  // a field of unknown type 13
    PutBytes(storage.get(), p, b);
    CHECK(Has(OpenError(storage.get(), *format, p, o),
              "/bad.parquet: unknown field type 13 at offset " + std::to_string(fbegin + 1)));
  }
  SECTION("absurd row counts") {
    pq::FileMetaData m = FooterOf(good);
    m.num_rows = int64_t{1} << 50;
    PutBytes(storage.get(), p, WithFooter(good, m));
    CHECK(Has(OpenError(storage.get(), *format, p, o),
              "/bad.parquet: row groups hold 12 rows, the footer says 1125899906842624 (footer "
              "at offset " +
                  std::to_string(fbegin) + ")"));
    m = FooterOf(good);
    m.row_groups[1].num_rows = -3;
    PutBytes(storage.get(), p, WithFooter(good, m));
    CHECK(Has(OpenError(storage.get(), *format, p, o), "row group 1 claims -3 rows"));
  }
  SECTION("a row group claiming more rows than its pages hold") {
    pq::FileMetaData m = FooterOf(good);
    m.row_groups[0].num_rows = int64_t{1} << 28;
    m.num_rows += (int64_t{1} << 28) - 5;
    PutBytes(storage.get(), p, WithFooter(good, m));
    const uint64_t chunk = static_cast<uint64_t>(m.row_groups[0].columns[0].meta.data_page_offset);
    CHECK(Has(OpenError(storage.get(), *format, p, o),
              "/bad.parquet: column 'x' at offset " + std::to_string(chunk) +
                  ": 268435456 rows of 8 bytes exceed reader.max_decoded_bytes (1073741824)"));
  }
  SECTION("a chunk offset past the end of the data") {
    pq::FileMetaData m = FooterOf(good);
    m.row_groups[2].columns[1].meta.data_page_offset = int64_t{1} << 40;
    PutBytes(storage.get(), p, WithFooter(good, m));
    CHECK(Has(OpenError(storage.get(), *format, p, o),
              "/bad.parquet: row group 2, column 'y': chunk of"));
    CHECK(Has(OpenError(storage.get(), *format, p, o), "(offset 1099511627776)"));
  }
  SECTION("a page whose compressed size lies") {
    // The first page header starts at offset 4: type, uncompressed size, compressed size.
    std::string b = good;
    pq::PageHeader h;
    size_t used = 0;
    h = pq::DecodePageHeader(reinterpret_cast<const uint8_t*>(b.data() + 4), b.size() - 4, "b", 4,
                             &used)
            .value();
    h.compressed_size = 1 << 30;
    h.uncompressed_size = 1 << 30;
    const std::string hb = pq::EncodePageHeader(h);
    REQUIRE(hb.size() > 0);
    b = b.substr(0, 4) + hb + b.substr(4 + used);  // longer header: shift the rest
    pq::FileMetaData m = FooterOf(good);
    const int64_t shift = static_cast<int64_t>(hb.size()) - static_cast<int64_t>(used);
    for (auto& g : m.row_groups) {
      for (auto& c : g.columns) {
        if (c.meta.data_page_offset > 4) c.meta.data_page_offset += shift;
      }
    }
    m.row_groups[0].columns[0].meta.total_compressed_size += shift;
    PutBytes(storage.get(), p, WithFooter(b, m));
    CHECK(Has(OpenError(storage.get(), *format, p, o),
              "/bad.parquet: column 'x': page at offset 4: compressed size 1073741824 past the "
              "chunk end"));
  }
}

}  // namespace
}  // namespace dlio::testing
