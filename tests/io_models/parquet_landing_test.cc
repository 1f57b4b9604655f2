// A pipeline reader thread whose consumer reads no byte lends the formats one landing buffer
// (ReadScratch: SampleBuffer::landing), and the native parquet reader reads every row group's
// column chunk into it: one buffer, warm, whatever the number of groups, where before each group
// was read into buffers of its own that the reader's group cache kept (five of them in turn: the
// four cached groups and the one being read), so the reads kept landing in cold memory. The
// requests stay those of a plain read, rows are still served (as views of the landed bytes), and
// a caller that copies rows reads a landed group again into memory of its own.
#include <catch2/catch.hpp>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "../format/format_test_util.h"
#include "../format/parquet_test_util.h"
#include "pipeline/read_scratch.h"
#include "test_util.h"

namespace dlio::testing {
namespace {

// One read: where in the file, how many bytes, and where in memory they went.
struct LandedRead {
  uint64_t offset = 0;
  size_t size = 0;
  const void* dst = nullptr;
};

// Records every ReadAt / ReadSomeAt with its destination.
class DestinationLog final : public StorageWrapper {
 public:
  explicit DestinationLog(std::unique_ptr<Storage> inner)
      : StorageWrapper("destlog", std::move(inner)) {}
  std::vector<LandedRead> Take() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::move(reads_);
  }

 protected:
  Result<std::unique_ptr<File>> DoOpen(const std::string& path, OpenMode mode,
                                       const FileOptions& options) override {
    DLIO_ASSIGN_OR_RETURN(std::unique_ptr<File> file, StorageWrapper::DoOpen(path, mode, options));
    return std::unique_ptr<File>(std::make_unique<LoggedFile>(std::move(file), this));
  }

 private:
  class LoggedFile final : public FileWrapper {
   public:
    LoggedFile(std::unique_ptr<File> inner, DestinationLog* owner)
        : FileWrapper(std::move(inner)), owner_(owner) {}

   protected:
    Result<size_t> DoReadAt(uint64_t offset, size_t n, void* buf) override {
      owner_->Add(offset, n, buf);
      return FileWrapper::DoReadAt(offset, n, buf);
    }
    Result<size_t> DoReadSomeAt(uint64_t offset, size_t n, void* buf) override {
      owner_->Add(offset, n, buf);
      return FileWrapper::DoReadSomeAt(offset, n, buf);
    }

   private:
    DestinationLog* owner_;
  };
  void Add(uint64_t offset, size_t n, const void* dst) {
    std::lock_guard<std::mutex> lock(mu_);
    reads_.push_back({offset, n, dst});
  }
  std::mutex mu_;
  std::vector<LandedRead> reads_;
};

std::vector<std::pair<uint64_t, size_t>> Requests(const std::vector<LandedRead>& reads) {
  std::vector<std::pair<uint64_t, size_t>> out;
  for (const LandedRead& r : reads) out.emplace_back(r.offset, r.size);
  return out;
}

TEST_CASE("parquet native reads every row group into the reader thread's landing buffer") {
  DestinationLog log(BoundMemoryStorage());
  auto format = MakeFormatByName("parquet");
  FormatOptions o;
  o.io_model = IoModel::kNative;
  o.parquet.row_group_size = 8;
  o.parquet.use_dictionary = false;  // PLAIN pages: the rows stay in the bytes read
  FileSpec spec;
  spec.sample_sizes.assign(96, 1000);  // 12 row groups of 8 rows of 1000 bytes
  spec.seed = 7;
  REQUIRE(format->Write(&log, "/l.parquet", spec, o).ok());
  std::vector<std::string> expected;
  for (uint64_t i = 0; i < 96; ++i) expected.push_back(ExpectedRow(o.parquet, 7, i, 1000));

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
  const std::vector<LandedRead> plain_reads = log.Take();
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
  const std::vector<LandedRead> landed = log.Take();
  CHECK(Requests(landed) == Requests(plain_reads));  // the same requests, in the same order

  // Every chunk landed at the same place: the lent buffer, one group's worth of memory.
  std::set<const void*> destinations;
  for (const LandedRead& rd : landed) destinations.insert(rd.dst);
  CHECK(destinations.size() == 1);
  // The plain read's chunk buffers: its group cache keeps 4 groups, and the next is read into a
  // fifth, so its reads cycle through five buffers of their own.
  std::set<const void*> plain_destinations;
  for (const LandedRead& rd : plain_reads) plain_destinations.insert(rd.dst);
  CHECK(plain_destinations.size() == 5);

  // Group 10 is still cached, but landed: a caller that copies reads it again, into memory of its
  // own, and gets the row right although group 11 has been read over it since.
  SampleBuffer copier;
  REQUIRE(r.value()->ReadSample(80, &copier).ok());
  CHECK(BufferString(copier) == expected[80]);
  const std::vector<LandedRead> again = log.Take();
  REQUIRE(again.size() == 1);
  CHECK(again[0].offset == plain_reads[10].offset);
  CHECK(again[0].dst != landed.back().dst);
  // The view caller's next row of group 10 is served from the cache: no request.
  REQUIRE(r.value()->ReadSample(81, &buf).ok());
  CHECK(buf.size() == 1000);
  CHECK(log.Take().empty());
}

TEST_CASE("parquet landing: a larger group takes a new landing buffer and the old stays alive") {
  // Groups of 4 rows, then of 16 (two files): the second file's first group needs more than the
  // landing holds, so the reader lends the caller a larger buffer rather than growing the one a
  // cached group (and the caller's view) still points into.
  DestinationLog log(BoundMemoryStorage());
  auto format = MakeFormatByName("parquet");
  FormatOptions small, large;
  small.io_model = large.io_model = IoModel::kNative;
  small.parquet.use_dictionary = large.parquet.use_dictionary = false;
  small.parquet.row_group_size = 4;
  large.parquet.row_group_size = 16;
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
  CHECK(BufferString(buf) == ExpectedRow(small.parquet, 3, 0, 512));
  REQUIRE(b.value()->ReadSample(0, &buf).ok());
  CHECK(BufferString(buf) == ExpectedRow(large.parquet, 3, 0, 512));
  CHECK(buf.landing() != first);
  CHECK(buf.landing()->size() > first_bytes);
  // The row is a view into the lent buffer.
  CHECK(buf.data() >= buf.landing()->data());
  CHECK(buf.data() + buf.size() <= buf.landing()->data() + buf.landing()->size());
  // The first buffer is still the small file's cached group 0's: a copying caller reads that
  // group again, so its bytes are never trusted, but they stay mapped while the group holds them.
  CHECK(first.use_count() >= 2);
}

}  // namespace
}  // namespace dlio::testing
