// A pipeline reader thread whose consumer reads no byte lends the formats one landing buffer
// (ReadScratch: SampleBuffer::landing), and the native parquet reader reads every row group's
// column chunk into it: one buffer, warm, whatever the number of groups, where before each group
// was read into buffers of its own that the reader's group cache kept (five of them in turn: the
// four cached groups and the one being read), so the reads kept landing in cold memory. The
// requests stay those of a plain read, rows are still served (as views of the landed bytes), and
// a caller that copies rows reads a landed group again into memory of its own.
#include <catch2/catch.hpp>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "../format/format_test_util.h"
#include "../format/parquet_test_util.h"
#include "pipeline/read_scratch.h"
#include "test_util.h"

namespace dlio::testing {
namespace {

TEST_CASE("parquet native reads every row group into the reader thread's landing buffer") {
  ReadLog log(BoundMemoryStorage());
  auto format = MakeFormatByName("parquet");
  FormatOptions o;
  o.io_model = IoModel::kNative;
  ParquetOf(o).row_group_size = 8;
  ParquetOf(o).use_dictionary = false;  // PLAIN pages: the rows stay in the bytes read
  FileSpec spec;
  spec.sample_sizes.assign(96, 1000);  // 12 row groups of 8 rows of 1000 bytes
  spec.seed = 7;
  REQUIRE(format->Write(&log, "/l.parquet", spec, o).ok());
  std::vector<std::string> expected;
  for (uint64_t i = 0; i < 96; ++i) expected.push_back(ExpectedRow(ParquetOf(o), 7, i, 1000));

  // The requests and rows of a plain read (the caller copies every row).
  log.Take();
  auto plain = format->Open(&log, "/l.parquet", o);
  REQUIRE(plain.ok());
  const size_t open_reads = log.Take().size();
  SampleBuffer copy;
  for (uint64_t i = 0; i < 96; ++i) {
    REQUIRE((*plain)->ReadSample(i, &copy).ok());
    REQUIRE(BufferString(copy) == expected[i]);
  }
  const std::vector<const void*> plain_destinations = log.destinations();
  const auto plain_reads = log.Take();
  REQUIRE(plain_reads.size() == 12);  // one chunk a group

  // A reader thread's scratch buffer: views, and its landing buffer.
  pipeline_internal::ReadScratch scratch;
  REQUIRE(scratch.Init("landing", /*bounded=*/false, 0).ok());
  SampleBuffer& buf = scratch.buffer();
  REQUIRE(buf.views_allowed());
  auto r = format->Open(&log, "/l.parquet", o);
  REQUIRE(r.ok());
  CHECK(log.Take().size() == open_reads);
  for (uint64_t i = 0; i < 96; ++i) {
    REQUIRE(r.value()->ReadSample(i, &buf).ok());
    REQUIRE(buf.has_view());
    // Rows in order: each row's group is the one read last, whose bytes are still there.
    REQUIRE(BufferString(buf) == expected[i]);
  }
  const std::vector<const void*> landed_at = log.destinations();
  const auto landed = log.Take();
  CHECK(landed == plain_reads);  // the same requests, in the same order

  // Every chunk landed at the same place: the lent buffer, one group's worth of memory.
  CHECK(std::set<const void*>(landed_at.begin(), landed_at.end()).size() == 1);
  // The plain read's chunk buffers: its group cache keeps 4 groups, and the next is read into a
  // fifth, so its reads cycle through five buffers of their own.
  CHECK(std::set<const void*>(plain_destinations.begin(), plain_destinations.end()).size() == 5);

  // Group 10 is still cached, but landed: a caller that copies reads it again, into memory of its
  // own, and gets the row right although group 11 has been read over it since.
  SampleBuffer copier;
  REQUIRE(r.value()->ReadSample(80, &copier).ok());
  CHECK(BufferString(copier) == expected[80]);
  const std::vector<const void*> again_at = log.destinations();
  const auto again = log.Take();
  REQUIRE(again.size() == 1);
  CHECK(again[0] == plain_reads[10]);
  CHECK(again_at[0] != landed_at.back());
  // The view caller's next row of group 10 is served from the cache: no request.
  REQUIRE(r.value()->ReadSample(81, &buf).ok());
  CHECK(buf.size() == 1000);
  CHECK(log.Take().empty());
}

TEST_CASE("parquet landing: a larger group takes a new landing buffer and the old stays alive") {
  // Groups of 4 rows, then of 16 (two files): the second file's first group needs more than the
  // landing holds, so the reader lends the caller a larger buffer rather than growing the one a
  // cached group (and the caller's view) still points into.
  ReadLog log(BoundMemoryStorage());
  auto format = MakeFormatByName("parquet");
  FormatOptions small, large;
  small.io_model = large.io_model = IoModel::kNative;
  ParquetOf(small).use_dictionary = ParquetOf(large).use_dictionary = false;
  ParquetOf(small).row_group_size = 4;
  ParquetOf(large).row_group_size = 16;
  FileSpec spec;
  spec.sample_sizes.assign(32, 512);
  spec.seed = 3;
  REQUIRE(format->Write(&log, "/s.parquet", spec, small).ok());
  REQUIRE(format->Write(&log, "/b.parquet", spec, large).ok());
  auto s = format->Open(&log, "/s.parquet", small);
  auto b = format->Open(&log, "/b.parquet", large);
  REQUIRE((s.ok() && b.ok()));
  pipeline_internal::ReadScratch scratch;
  REQUIRE(scratch.Init("landing", false, 0).ok());
  SampleBuffer& buf = scratch.buffer();
  REQUIRE(s.value()->ReadSample(0, &buf).ok());
  const std::shared_ptr<AlignedBuffer> first = buf.landing();
  const uint64_t first_bytes = first->size();
  CHECK(BufferString(buf) == ExpectedRow(ParquetOf(small), 3, 0, 512));
  REQUIRE(b.value()->ReadSample(0, &buf).ok());
  CHECK(BufferString(buf) == ExpectedRow(ParquetOf(large), 3, 0, 512));
  CHECK(buf.landing() != first);
  CHECK(buf.landing()->size() > first_bytes);
  // The row is a view into the lent buffer.
  CHECK(buf.data() >= buf.landing()->data());
  CHECK(buf.data() + buf.size() <= buf.landing()->data() + buf.landing()->size());
  // The first buffer is still the small file's cached group 0's: a copying caller reads that
  // group again, so its bytes are never trusted, but they stay mapped while the group holds them.
  CHECK(first.use_count() >= 2);
}

TEST_CASE("parquet landing_bytes: a row group of the rows read, as the writer lays them out") {
  auto format = MakeFormatByName("parquet");
  FormatOptions o;
  o.io_model = IoModel::kNative;
  o.record_length_bytes = 1000;
  ParquetOf(o).row_group_size = 8;
  // 8 rows of 1000 bytes, 1/64 of it (125) and 64 KiB for page headers and levels.
  CHECK(format->landing_bytes(o) == 8000 + 125 + 65536);
  // A file's rows cap a group; so do the writer's generation batches.
  o.samples_per_file = 6;
  CHECK(format->landing_bytes(o) == 6000 + 93 + 65536);
  o.samples_per_file = 0;
  ParquetOf(o).generation_batch_size = 4;
  CHECK(format->landing_bytes(o) == 4000 + 62 + 65536);
  ParquetOf(o).generation_batch_size = 0;
  // Only the columns read: a list of 4 float32 (16 bytes a row); the unread one lands nothing.
  ParquetOf(o).columns = {{"a", "float32", 4, true}, {"b", "uint8", 100, false}};
  CHECK(format->landing_bytes(o) == 128 + 2 + 65536);
  ParquetOf(o).columns.clear();
  // Over 64 MiB (2^20 rows of 1000 bytes), or the pyarrow model (which lands nothing): no hint.
  ParquetOf(o).row_group_size = uint64_t{1} << 20;
  CHECK(format->landing_bytes(o) == 0);
  ParquetOf(o).row_group_size = 8;
  o.io_model = IoModel::kPyarrow;
  CHECK(format->landing_bytes(o) == 0);
  o.io_model = IoModel::kAuto;  // parquet's default model is pyarrow
  CHECK(format->landing_bytes(o) == 0);
}

TEST_CASE("parquet landing: a landing buffer reserved from landing_bytes takes every group") {
  // The pipeline makes each reader thread's landing buffer of Format::landing_bytes before the
  // first epoch (PipelineOptions::reserve_landing_bytes): every group lands in that one buffer,
  // never replaced, with the requests and rows of a read without it.
  ReadLog log(BoundMemoryStorage());
  auto format = MakeFormatByName("parquet");
  FormatOptions o;
  o.io_model = IoModel::kNative;
  o.record_length_bytes = 1000;
  ParquetOf(o).row_group_size = 8;
  FileSpec spec;
  spec.sample_sizes.assign(92, 1000);  // 11 groups of 8 rows and one of 4
  spec.seed = 5;
  REQUIRE(format->Write(&log, "/r.parquet", spec, o).ok());
  std::vector<std::vector<std::pair<uint64_t, size_t>>> requests;
  for (uint64_t reserve : {uint64_t{0}, format->landing_bytes(o)}) {
    INFO("reserve " << reserve);
    pipeline_internal::ReadScratch scratch;
    REQUIRE(scratch.Init("landing", false, 0, reserve).ok());
    SampleBuffer& buf = scratch.buffer();
    const AlignedBuffer* lent = buf.landing().get();
    CHECK(lent->capacity() >= reserve);
    CHECK(scratch.physical_bytes() == buf.capacity() + lent->capacity());
    log.Take();
    auto r = format->Open(&log, "/r.parquet", o);
    REQUIRE(r.ok());
    log.Take();  // the footer's reads
    for (uint64_t i = 0; i < 92; ++i) {
      REQUIRE(r.value()->ReadSample(i, &buf).ok());
      REQUIRE(BufferString(buf) == ExpectedRow(ParquetOf(o), 5, i, 1000));
    }
    const std::vector<const void*> at = log.destinations();
    requests.push_back(log.Take());
    if (reserve != 0) {  // every chunk read into the buffer made first
      CHECK(buf.landing().get() == lent);
      CHECK(std::set<const void*>(at.begin(), at.end()) == std::set<const void*>{lent->data() + 0});
    }
  }
  CHECK(requests[0] == requests[1]);
  CHECK(requests[0].size() == 12);  // one chunk a group
}

}  // namespace
}  // namespace dlio::testing
