// parquet: rows of the row group a buffer holds served as views at once (ViewsOfHeld, through a
// FormatDataSource's cursor): the rows ReadWith of each would give, no request, and nothing when
// ReadWith would not serve them from what the buffer holds.
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "dlio/data_source.h"
#include "format/format_test_util.h"
#include "format/parquet_test_util.h"
#include "test_util.h"

namespace dlio::testing {
namespace {

std::string SpanString(const SampleSpan& s) {
  return std::string(reinterpret_cast<const char*>(s.data), s.size);
}

TEST_CASE("parquet serves the rows of the held group as views at once", "[format][parquet]") {
  ReadLog log(BoundMemoryStorage());
  auto format = MakeFormatByName("parquet");
  FormatDataSourceOptions options;
  options.format.io_model = IoModel::kNative;
  ParquetOf(options.format).row_group_size = 8;
  ParquetOf(options.format).use_dictionary = false;  // PLAIN pages: rows stay in the bytes read
  FileSpec spec;
  spec.sample_sizes.assign(44, 100);  // groups of 8 rows, the last of 4 (rows 40-43)
  spec.seed = 3;
  for (const char* path : {"/v0.parquet", "/v1.parquet"}) {
    REQUIRE(format->Write(&log, path, spec, options.format).ok());
  }
  std::vector<std::string> expected;
  for (uint64_t i = 0; i < 44; ++i)
    expected.push_back(ExpectedRow(ParquetOf(options.format), 3, i, 100));
  auto source = MakeFormatDataSource(&log, format.get(), {"/v0.parquet", "/v1.parquet"}, options);
  REQUIRE(source.ok());
  DataSource& ds = **source;
  auto cursor = ds.NewCursor();
  SampleBuffer buf;
  buf.set_views_allowed(true);
  buf.set_landing(std::make_shared<AlignedBuffer>());
  std::vector<SampleSpan> spans(16);

  // Nothing held yet: no views.
  CHECK(ds.ViewsOfHeld({0, 0}, 8, &buf, cursor.get(), spans.data()) == 0);
  log.Take();
  REQUIRE(ds.ReadWith({0, 1}, &buf, cursor.get()).ok());
  CHECK(log.Take().size() == 1);  // group 0's chunk
  // Rows 2-7 (the group's rest, of the 10 asked for), the buffer left holding row 7.
  REQUIRE(ds.ViewsOfHeld({0, 2}, 10, &buf, cursor.get(), spans.data()) == 6);
  for (uint64_t r = 0; r < 6; ++r) CHECK(SpanString(spans[r]) == expected[2 + r]);
  CHECK(BufferString(buf) == expected[7]);
  // The next group, another file, a copying buffer, another cursor: nothing served.
  CHECK(ds.ViewsOfHeld({0, 8}, 4, &buf, cursor.get(), spans.data()) == 0);
  CHECK(ds.ViewsOfHeld({1, 2}, 4, &buf, cursor.get(), spans.data()) == 0);
  SampleBuffer copy;
  CHECK(ds.ViewsOfHeld({0, 2}, 4, &copy, cursor.get(), spans.data()) == 0);
  auto other = ds.NewCursor();
  CHECK(ds.ViewsOfHeld({0, 2}, 4, &buf, other.get(), spans.data()) == 0);
  // ReadWith of the same rows serves the same bytes from the same group.
  SampleBuffer each;
  each.set_views_allowed(true);
  for (uint64_t r = 2; r < 8; ++r) {
    REQUIRE(ds.ReadWith({0, r}, &each, other.get()).ok());
    CHECK(each.data() == spans[r - 2].data);
    CHECK(each.size() == 100);
  }
  CHECK(log.Take().empty());  // views make no request
  // The last group: at most the rows the file has.
  REQUIRE(ds.ReadWith({0, 40}, &buf, cursor.get()).ok());
  REQUIRE(ds.ViewsOfHeld({0, 41}, 10, &buf, cursor.get(), spans.data()) == 3);
  for (uint64_t r = 0; r < 3; ++r) CHECK(SpanString(spans[r]) == expected[41 + r]);
  // Once another file became the most recently used, the cursor's reader takes a lookup again.
  REQUIRE(ds.ReadWith({1, 0}, &copy, other.get()).ok());
  CHECK(ds.ViewsOfHeld({0, 41}, 2, &buf, cursor.get(), spans.data()) == 0);
}

TEST_CASE("parquet views at once cross the pages of a row group", "[format][parquet]") {
  auto storage = BoundMemoryStorage();
  auto format = MakeFormatByName("parquet");
  FormatOptions o;
  o.io_model = IoModel::kNative;
  ParquetOf(o).row_group_size = 8;
  ParquetOf(o).use_dictionary = false;
  FileSpec spec;
  spec.sample_sizes.assign(16, 300000);  // pages of 1 MiB: a few rows each, 2-3 pages a group
  spec.seed = 4;
  REQUIRE(format->Write(storage.get(), "/p.parquet", spec, o).ok());
  auto r = format->Open(storage.get(), "/p.parquet", o);
  REQUIRE(r.ok());
  SampleBuffer buf, each;
  buf.set_views_allowed(true);
  each.set_views_allowed(true);
  std::vector<SampleSpan> spans(8);
  for (uint64_t first : {uint64_t{0}, uint64_t{8}}) {
    REQUIRE((*r)->ReadSample(first, &buf).ok());
    REQUIRE((*r)->ViewsOfHeld(first + 1, 8, &buf, spans.data()) == 7);
    for (uint64_t k = 0; k < 7; ++k) {
      const uint64_t row = first + 1 + k;
      CHECK(SpanString(spans[k]) == ExpectedRow(ParquetOf(o), 4, row, 300000));
      REQUIRE((*r)->ReadSample(row, &each).ok());
      CHECK(each.data() == spans[k].data);  // where ReadSample's view of the row lies
    }
    // The rows crossed a page: a page header lies between two of them.
    bool crossed = false;
    for (uint64_t k = 0; k + 1 < 7; ++k) crossed |= spans[k + 1].data != spans[k].data + 300000;
    CHECK(crossed);
  }
}

}  // namespace
}  // namespace dlio::testing
