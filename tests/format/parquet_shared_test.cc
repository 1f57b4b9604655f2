// parquet: threads sharing one reader read a row group once. A thread that misses a group another
// thread is reading waits for that read instead of sending the same request (as arrow's one reader
// of a file reads a group once), unless what that read leaves is no use to it (a landed group to a
// caller that copies rows), and a read that fails leaves the waiter to read the group itself.
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "dlio/storage_wrapper.h"
#include "format/format_test_util.h"
#include "format/parquet_test_util.h"
#include "test_util.h"

namespace dlio::testing {
namespace {

// Counts the reads of each offset once armed, and holds the first read of an offset until a
// second read of it arrives, or for up to `hold`: two threads that both request a group's chunk
// then both get to send it, whatever the scheduling; a thread that waits for the other's read
// does not, and the held read goes on after `hold`. Reads that fail: `fail_offset`'s first.
class HeldReads final : public StorageWrapper {
 public:
  explicit HeldReads(std::unique_ptr<Storage> inner) : StorageWrapper("held", std::move(inner)) {}
  void Arm(std::chrono::milliseconds hold, uint64_t fail_offset = ~uint64_t{0}) {
    std::lock_guard<std::mutex> lock(mu_);
    armed_ = true;
    hold_ = hold;
    fail_offset_ = fail_offset;
    counts_.clear();
  }
  int count(uint64_t offset) {
    std::lock_guard<std::mutex> lock(mu_);
    return counts_[offset];
  }

 protected:
  Result<std::unique_ptr<File>> DoOpen(const std::string& path, OpenMode mode,
                                       const FileOptions& options) override {
    DLIO_ASSIGN_OR_RETURN(std::unique_ptr<File> file, StorageWrapper::DoOpen(path, mode, options));
    return std::unique_ptr<File>(std::make_unique<HeldFile>(std::move(file), this));
  }

 private:
  class HeldFile final : public FileWrapper {
   public:
    HeldFile(std::unique_ptr<File> inner, HeldReads* owner)
        : FileWrapper(std::move(inner)), owner_(owner) {}

   protected:
    Result<size_t> DoReadAt(uint64_t offset, size_t n, void* buf) override {
      DLIO_RETURN_NOT_OK(owner_->Before(offset));
      return FileWrapper::DoReadAt(offset, n, buf);
    }
    Result<size_t> DoReadSomeAt(uint64_t offset, size_t n, void* buf) override {
      DLIO_RETURN_NOT_OK(owner_->Before(offset));
      return FileWrapper::DoReadSomeAt(offset, n, buf);
    }

   private:
    HeldReads* owner_;
  };

  Status Before(uint64_t offset) {
    std::unique_lock<std::mutex> lock(mu_);
    if (!armed_) return Status::OK();
    const int n = ++counts_[offset];
    cv_.notify_all();
    if (n == 1) cv_.wait_for(lock, hold_, [&] { return counts_[offset] > 1; });
    if (n == 1 && offset == fail_offset_) return Status::IOError("held: failed read at ", offset);
    return Status::OK();
  }

  std::mutex mu_;
  std::condition_variable cv_;
  bool armed_ = false;
  std::chrono::milliseconds hold_{0};
  uint64_t fail_offset_ = ~uint64_t{0};
  std::map<uint64_t, int> counts_;
};

struct SharedFile {
  HeldReads storage{BoundMemoryStorage()};
  std::unique_ptr<Format> format = MakeFormatByName("parquet");
  FormatOptions o;
  std::vector<std::string> expected;
  uint64_t chunk0 = 0;  // offset of group 0's chunk

  SharedFile() {
    o.io_model = IoModel::kNative;
    ParquetOf(o).row_group_size = 8;
    ParquetOf(o).use_dictionary = false;  // PLAIN pages: rows stay in the bytes read
    FileSpec spec;
    spec.sample_sizes.assign(32, 500);  // 4 groups of 8 rows
    spec.seed = 5;
    REQUIRE(format->Write(&storage, "/s.parquet", spec, o).ok());
    for (uint64_t i = 0; i < 32; ++i) expected.push_back(ExpectedRow(ParquetOf(o), 5, i, 500));
    chunk0 = ReadParquetLayout(&storage, "/s.parquet").Chunk(0, 0).offset;
  }
};

// Two threads each read one row of group 0 through `a` and `b` at once; returns their statuses
// and leaves the rows read in the buffers.
std::vector<Status> ReadRowsAtOnce(FormatReader* r, SampleBuffer* a, SampleBuffer* b) {
  std::vector<Status> st(2);
  std::thread first([&] { st[0] = r->ReadSample(1, a); });
  std::thread second([&] { st[1] = r->ReadSample(2, b); });
  first.join();
  second.join();
  return st;
}

SampleBuffer LandingBuffer() {
  SampleBuffer buf;
  buf.set_views_allowed(true);
  buf.set_landing(std::make_shared<AlignedBuffer>());
  return buf;
}

TEST_CASE("parquet: two threads that miss the same row group read it once", "[format][parquet]") {
  SharedFile f;
  auto r = f.format->Open(&f.storage, "/s.parquet", f.o);
  REQUIRE(r.ok());
  SECTION("copies") {
    SampleBuffer a, b;
    f.storage.Arm(std::chrono::milliseconds(1000));
    for (const Status& st : ReadRowsAtOnce(r->get(), &a, &b)) REQUIRE(st.ok());
    CHECK(f.storage.count(f.chunk0) == 1);
    CHECK(BufferString(a) == f.expected[1]);
    CHECK(BufferString(b) == f.expected[2]);
  }
  SECTION("views, each thread with its landing buffer") {
    SampleBuffer a = LandingBuffer(), b = LandingBuffer();
    f.storage.Arm(std::chrono::milliseconds(1000));
    for (const Status& st : ReadRowsAtOnce(r->get(), &a, &b)) REQUIRE(st.ok());
    CHECK(f.storage.count(f.chunk0) == 1);
    // Both are views of the one landed group, the newest read into its landing buffer.
    CHECK(a.view_keeper() == b.view_keeper());
    CHECK(BufferString(a) == f.expected[1]);
    CHECK(BufferString(b) == f.expected[2]);
  }
}

TEST_CASE("parquet: a thread waiting for another's read of a group it cannot use reads it itself",
          "[format][parquet]") {
  SharedFile f;
  auto r = f.format->Open(&f.storage, "/s.parquet", f.o);
  REQUIRE(r.ok());
  SECTION("the read fails") {
    SampleBuffer a, b;
    f.storage.Arm(std::chrono::milliseconds(300), f.chunk0);
    const std::vector<Status> st = ReadRowsAtOnce(r->get(), &a, &b);
    // One thread's read failed; the other read the group after it (or before, when it came
    // second to the cache's lock) and got its row.
    CHECK(f.storage.count(f.chunk0) == 2);
    CHECK(st[0].ok() != st[1].ok());
    const SampleBuffer& good = st[0].ok() ? a : b;
    CHECK(BufferString(good) == f.expected[st[0].ok() ? 1 : 2]);
  }
  SECTION("a landed group to a caller that copies") {
    SampleBuffer landing = LandingBuffer();
    REQUIRE(r.value()->ReadSample(0, &landing).ok());  // group 0 is cached, landed
    SampleBuffer copy;
    f.storage.Arm(std::chrono::milliseconds(0));
    REQUIRE(r.value()->ReadSample(3, &copy).ok());
    CHECK(f.storage.count(f.chunk0) == 1);  // read again into memory of its own
    CHECK(BufferString(copy) == f.expected[3]);
  }
}

}  // namespace
}  // namespace dlio::testing
