// dlio/storage_wrapper.h: a user-written decorator (counting reads) over memory storage, used by a
// FormatDataSource; and every call of Storage and File forwarded through the wrappers.
#include "dlio/storage_wrapper.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "dlio/data_source.h"
#include "format/format_test_util.h"

namespace dlio::testing {
namespace {

// What a user writes: a decorator that counts the reads and read bytes of the files it opens.
class CountingStorage final : public StorageWrapper {
 public:
  explicit CountingStorage(std::unique_ptr<Storage> inner)
      : StorageWrapper("counting", std::move(inner)) {}

  uint64_t reads() const { return reads_.load(); }
  uint64_t read_bytes() const { return read_bytes_.load(); }

 protected:
  Result<std::unique_ptr<File>> DoOpen(const std::string& path, OpenMode mode,
                                       const FileOptions& options) override {
    DLIO_ASSIGN_OR_RETURN(std::unique_ptr<File> file, StorageWrapper::DoOpen(path, mode, options));
    return std::unique_ptr<File>(std::make_unique<CountingFile>(std::move(file), this));
  }

 private:
  class CountingFile final : public FileWrapper {
   public:
    CountingFile(std::unique_ptr<File> inner, CountingStorage* owner)
        : FileWrapper(std::move(inner)), owner_(owner) {}

   protected:
    Result<size_t> DoReadAt(uint64_t offset, size_t n, void* buf) override {
      DLIO_ASSIGN_OR_RETURN(const size_t got, FileWrapper::DoReadAt(offset, n, buf));
      owner_->reads_.fetch_add(1);
      owner_->read_bytes_.fetch_add(got);
      return got;
    }
    Result<size_t> DoReadSomeAt(uint64_t offset, size_t n, void* buf) override {
      DLIO_ASSIGN_OR_RETURN(const size_t got, FileWrapper::DoReadSomeAt(offset, n, buf));
      owner_->reads_.fetch_add(1);
      owner_->read_bytes_.fetch_add(got);
      return got;
    }

   private:
    CountingStorage* owner_;
  };

  std::atomic<uint64_t> reads_{0}, read_bytes_{0};
};

TEST_CASE("storage wrapper: a user's counting decorator under a FormatDataSource",
          "[format][storage_wrapper]") {
  auto inner = NewMemoryStorage();
  Storage* memory = inner.get();
  CountingStorage counting(std::move(inner));
  counting.Bind(SystemClock(), nullptr);
  auto format = MakeFormatByName("npy");
  REQUIRE(format != nullptr);
  std::vector<std::string> files;
  std::vector<FileSpec> specs;
  for (int f = 0; f < 3; ++f) {
    FileSpec spec;
    spec.seed = 40 + f;
    spec.sample_sizes.assign(5, 300 + f);
    files.push_back("/d/f" + std::to_string(f) + ".npy");
    REQUIRE(counting.CreateDirs("/d").ok());
    REQUIRE(format->Write(&counting, files.back(), spec, {}).ok());
    specs.push_back(spec);
  }
  CHECK(counting.reads() == 0);  // writing reads nothing
  REQUIRE(counting.stats().write_bytes > 0);
  CHECK(memory->stats().write_bytes == counting.stats().write_bytes);  // forwarded, not copied

  auto source = MakeFormatDataSource(&counting, format.get(), files, {});
  REQUIRE(source.ok());
  REQUIRE((*source)->samples_per_file() == std::vector<uint64_t>(3, 5));
  uint64_t sample_bytes = 0;
  SampleBuffer buf;
  for (uint32_t f = 0; f < 3; ++f) {
    for (uint64_t i = 0; i < 5; ++i) {
      REQUIRE((*source)->Read({f, i}, &buf).ok());
      CHECK(std::string(reinterpret_cast<const char*>(buf.data()), buf.size()) ==
            ExpectedSample(specs[f], i));
      sample_bytes += buf.size();
    }
  }
  // Every read the source made went through the decorator: headers and samples.
  CHECK(counting.reads() > 0);
  CHECK(counting.reads() == counting.stats().read_ops);
  CHECK(counting.read_bytes() == counting.stats().read_bytes);
  CHECK(counting.read_bytes() >= sample_bytes);
  CHECK(memory->stats().read_ops == counting.reads());
}

TEST_CASE("storage wrapper: every Storage and File call reaches the wrapped storage",
          "[format][storage_wrapper]") {
  StorageWrapper wrapper("wrapped", BoundMemoryStorage());
  wrapper.Bind(SystemClock(), nullptr);
  Storage* inner = wrapper.inner();
  REQUIRE(wrapper.CreateDirs("/a/b").ok());
  CHECK(*inner->IsDirectory("/a/b"));
  CHECK(*wrapper.IsDirectory("/a/b"));
  {
    auto file = wrapper.Open("/a/b/x", OpenMode::kCreateNew);
    REQUIRE(file.ok());
    REQUIRE((*file)->WriteAt(0, "hello", 5).ok());
    CHECK(*(*file)->Size() == 5);
    REQUIRE((*file)->Sync().ok());
    REQUIRE((*file)->Close().ok());
  }
  // The inner storage's file, returned as it is, reports to the wrapper.
  CHECK(wrapper.stats().syncs == 1);
  CHECK(wrapper.stats().closes == 1);
  CHECK(wrapper.stats().write_bytes == 5);
  CHECK(*inner->FileSize("/a/b/x") == 5);
  CHECK(*wrapper.FileSize("/a/b/x") == 5);
  CHECK(*wrapper.Exists("/a/b/x"));
  CHECK(*wrapper.List("/a/b") == std::vector<std::string>{"x"});
  REQUIRE(wrapper.Rename("/a/b/x", "/a/b/y").ok());
  CHECK_FALSE(*inner->Exists("/a/b/x"));
  CHECK(*inner->Exists("/a/b/y"));
  REQUIRE(wrapper.SyncDir("/a/b").ok());
  {
    auto lock = wrapper.TryLock("/a/lock");
    REQUIRE(lock.ok());
    REQUIRE(*lock != nullptr);
    auto second = inner->TryLock("/a/lock");  // the lock is the inner storage's
    REQUIRE(second.ok());
    CHECK(*second == nullptr);
  }
  REQUIRE(wrapper.Remove("/a/b/y").ok());
  REQUIRE(wrapper.Remove("/a/lock").ok());
  REQUIRE(wrapper.RemoveEmptyDir("/a/b").ok());
  CHECK_FALSE(*inner->Exists("/a/b"));
  CHECK_FALSE(wrapper.SupportsDirect());
  CHECK_FALSE(wrapper.capabilities().host_files);

  StorageWrapper over_posix("wrapped", BoundPosixStorage());
  CHECK(over_posix.SupportsDirect());
  CHECK(over_posix.capabilities().host_files);
  CHECK(over_posix.capabilities().shared_write);
  CHECK(over_posix.CollectiveMpiComm("/x") == nullptr);
}

}  // namespace
}  // namespace dlio::testing
