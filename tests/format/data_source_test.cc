#include "dlio/data_source.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "dlio/storage_wrapper.h"
#include "format/format_test_util.h"
#include "test_util.h"

namespace dlio::testing {
namespace {

struct Dataset {
  std::unique_ptr<Storage> storage = BoundMemoryStorage();
  std::unique_ptr<Format> format = MakeFormatByName("npy");
  std::vector<std::string> files;
  std::vector<FileSpec> specs;

  explicit Dataset(int n, uint64_t samples = 4) {
    for (int f = 0; f < n; ++f) {
      FileSpec spec;
      spec.seed = 1000 + f;
      spec.sample_sizes.assign(samples, 512 + f);
      files.push_back("/f" + std::to_string(f) + ".npy");
      REQUIRE(format->Write(storage.get(), files.back(), spec, {}).ok());
      specs.push_back(spec);
    }
  }
};

TEST_CASE("data source reads every sample correctly from many threads", "[format][data_source]") {
  Dataset d(6);
  FormatDataSourceOptions options;
  options.max_open_files = 2;  // forces evictions while other threads read
  auto source = MakeFormatDataSource(d.storage.get(), d.format.get(), d.files, options);
  REQUIRE(source.ok());
  REQUIRE((*source)->num_files() == 6);
  REQUIRE((*source)->samples_per_file() == std::vector<uint64_t>(6, 4));
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      SampleBuffer buf;
      for (int round = 0; round < 20; ++round) {
        for (uint32_t f = 0; f < 6; ++f) {
          const uint32_t file = (f + t + round) % 6;
          const uint64_t i = (round + t) % 4;
          if (!(*source)->Read({file, i}, &buf).ok() ||
              BufferString(buf) != ExpectedSample(d.specs[file], i)) {
            ++bad;
          }
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  REQUIRE(bad == 0);
}

TEST_CASE("data source keeps an LRU of open readers", "[format][data_source]") {
  Dataset d(3);
  FormatDataSourceOptions options;
  options.samples_per_file = 4;  // trusted: no opens at creation
  options.max_open_files = 2;
  options.format.io_model = IoModel::kNative;  // numpy's np.load opens the file per sample
  auto source = MakeFormatDataSource(d.storage.get(), d.format.get(), d.files, options);
  REQUIRE(source.ok());
  const uint64_t base = d.storage->stats().opens;
  SampleBuffer buf;
  auto read = [&](uint32_t f) { REQUIRE((*source)->Read({f, 0}, &buf).ok()); };
  read(0), read(1), read(0), read(1);
  REQUIRE(d.storage->stats().opens - base == 2);
  read(2);  // evicts 0, the least recently used
  read(1);
  REQUIRE(d.storage->stats().opens - base == 3);
  read(0);
  REQUIRE(d.storage->stats().opens - base == 4);
  (*source)->CloseAll();
  read(0);
  REQUIRE(d.storage->stats().opens - base == 5);
}

TEST_CASE("reads through cursors open and evict as Read does", "[format][data_source]") {
  // Two cursors on one thread stand for two reader threads. A cursor skips the lock only while its
  // file is the most recently used one: reading it again would not change the LRU.
  Dataset d(3);
  FormatDataSourceOptions options;
  options.samples_per_file = 4;
  options.max_open_files = 2;
  options.format.io_model = IoModel::kNative;
  auto source = MakeFormatDataSource(d.storage.get(), d.format.get(), d.files, options);
  REQUIRE(source.ok());
  auto a = (*source)->NewCursor();
  auto b = (*source)->NewCursor();
  REQUIRE(a != nullptr);
  const uint64_t base = d.storage->stats().opens;
  SampleBuffer buf;
  auto read = [&](DataSourceCursor* c, uint32_t f, uint64_t i) {
    REQUIRE((*source)->ReadWith({f, i}, &buf, c).ok());
    CHECK(BufferString(buf) == ExpectedSample(d.specs[f], i));
  };
  for (uint64_t i = 0; i < 4; ++i) read(a.get(), 0, i);
  read(b.get(), 1, 0);
  read(a.get(), 0, 1);  // 0 becomes the most recently used again: [0, 1]
  CHECK(d.storage->stats().opens - base == 2);
  read(b.get(), 2, 0);  // evicts 1, not 0
  read(a.get(), 0, 2);
  CHECK(d.storage->stats().opens - base == 3);
  read(b.get(), 1, 3);  // 1 was evicted: opened again, evicting 2
  CHECK(d.storage->stats().opens - base == 4);
  read(a.get(), 0, 3);
  CHECK(d.storage->stats().opens - base == 4);
  (*source)->CloseAll();
  read(a.get(), 0, 0);  // CloseAll let the cursor's reader go: the file is opened again
  CHECK(d.storage->stats().opens - base == 5);
  Status past = (*source)->ReadWith({0, 4}, &buf, a.get());
  CHECK(past.code() == StatusCode::kOutOfRange);
  CHECK(past.message().find("/f0.npy sample 4") != std::string::npos);
  read(nullptr, 2, 1);  // no cursor: Read
}

TEST_CASE("open_per_sample opens a sample's file for it alone and closes it after",
          "[format][data_source]") {
  Dataset d(2);
  FormatDataSourceOptions options;
  options.open_per_sample = true;
  options.format.io_model = IoModel::kNative;
  SECTION("sample counts from the files: each opened once to count, none kept open") {
    const uint64_t base = d.storage->stats().opens;
    auto source = MakeFormatDataSource(d.storage.get(), d.format.get(), d.files, options);
    REQUIRE(source.ok());
    CHECK((*source)->samples_per_file() == std::vector<uint64_t>{4, 4});
    CHECK(d.storage->stats().opens - base == 2);
    CHECK(d.storage->stats().closes - d.storage->stats().opens == 0);
  }
  options.samples_per_file = 4;
  auto source = MakeFormatDataSource(d.storage.get(), d.format.get(), d.files, options);
  REQUIRE(source.ok());
  auto cursor = (*source)->NewCursor();
  const IoStats base = d.storage->stats();
  SampleBuffer buf;
  for (uint64_t i = 0; i < 4; ++i) {  // one file's samples in a row: each opens it again
    REQUIRE((*source)->Read({0, i}, &buf).ok());
    CHECK(BufferString(buf) == ExpectedSample(d.specs[0], i));
    REQUIRE((*source)->ReadWith({1, i}, &buf, cursor.get()).ok());
    CHECK(BufferString(buf) == ExpectedSample(d.specs[1], i));
    const IoStats now = d.storage->stats();
    CHECK(now.opens - base.opens == 2 * (i + 1));
    CHECK(now.closes - base.closes == 2 * (i + 1));  // closed before the next sample
  }
  SampleSpan span;
  CHECK((*source)->ViewsOfHeld({1, 0}, 1, &buf, cursor.get(), &span) == 0);  // nothing held
  Status past = (*source)->Read({1, 4}, &buf);
  CHECK(past.code() == StatusCode::kOutOfRange);
  CHECK(d.storage->stats().opens - base.opens == 8);  // refused before any open
}

TEST_CASE("open_files_at_start opens and closes every file once before any sample is read",
          "[format][data_source]") {
  Dataset d(3);
  FormatDataSourceOptions options;
  options.format.io_model = IoModel::kNative;
  options.samples_per_file = 4;
  const IoStats before = d.storage->stats();
  REQUIRE(MakeFormatDataSource(d.storage.get(), d.format.get(), d.files, options).ok());
  CHECK(d.storage->stats().opens == before.opens);  // a trusted count: no file opened
  options.open_files_at_start = true;
  for (uint64_t trusted : {uint64_t{0}, uint64_t{4}}) {
    options.samples_per_file = trusted;
    const IoStats base = d.storage->stats();
    auto source = MakeFormatDataSource(d.storage.get(), d.format.get(), d.files, options);
    REQUIRE(source.ok());
    CHECK((*source)->samples_per_file() == std::vector<uint64_t>{4, 4, 4});
    const IoStats made = d.storage->stats();
    CHECK(made.opens - base.opens == 3);
    CHECK(made.closes - base.closes == 3);  // none kept open
    SampleBuffer buf;
    REQUIRE((*source)->Read({2, 1}, &buf).ok());
    CHECK(BufferString(buf) == ExpectedSample(d.specs[2], 1));
    CHECK(d.storage->stats().opens - made.opens == 1);  // the read opens its file again
  }
  options.samples_per_file = 5;  // checked by those opens, before any read
  auto wrong = MakeFormatDataSource(d.storage.get(), d.format.get(), d.files, options);
  REQUIRE(!wrong.ok());
  CHECK(wrong.status().message().find("/f0.npy holds 4 samples") != std::string::npos);
  CHECK(wrong.status().message().find("dataset.num_samples_per_file") != std::string::npos);
  const std::unique_ptr<Format> synthetic = MakeFormatByName("synthetic");
  auto none = MakeFormatDataSource(nullptr, synthetic.get(), {"/v0"}, options);
  REQUIRE(!none.ok());
  CHECK(none.status().message() ==
        "reader.open_files_at_start: dataset.format 'synthetic' has no files to open");
}

TEST_CASE("threads reading through cursors get every sample right", "[format][data_source]") {
  Dataset d(6);
  FormatDataSourceOptions options;
  options.max_open_files = 2;  // evictions while other threads read through their cursors
  auto source = MakeFormatDataSource(d.storage.get(), d.format.get(), d.files, options);
  REQUIRE(source.ok());
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      SampleBuffer buf;
      auto cursor = (*source)->NewCursor();
      for (int round = 0; round < 20; ++round) {
        const uint32_t file = (t + round / 3) % 6;  // a few samples of a file in a row
        const uint64_t i = (round + t) % 4;
        if (!(*source)->ReadWith({file, i}, &buf, cursor.get()).ok() ||
            BufferString(buf) != ExpectedSample(d.specs[file], i)) {
          ++bad;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  REQUIRE(bad == 0);
}

// Opens are slow: every thread that needs a file arrives while another is still opening it.
class SlowOpenStorage final : public StorageWrapper {
 public:
  explicit SlowOpenStorage(std::unique_ptr<Storage> inner)
      : StorageWrapper("slow-open", std::move(inner)) {}

 protected:
  Result<std::unique_ptr<File>> DoOpen(const std::string& path, OpenMode mode,
                                       const FileOptions& options) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return StorageWrapper::DoOpen(path, mode, options);
  }
};

TEST_CASE("data source opens a file once for threads that need it at the same time",
          "[format][data_source]") {
  // Under the numpy model the open is the first sample's np.load. Threads that raced to open
  // the file each loaded it, and all but one load went unused: a load no sample asked for.
  Dataset d(1, 8);
  SlowOpenStorage slow(std::move(d.storage));
  slow.Bind(SystemClock(), nullptr);
  FormatDataSourceOptions options;
  options.samples_per_file = 8;  // trusted: no opens at creation
  auto source = MakeFormatDataSource(&slow, d.format.get(), d.files, options);
  REQUIRE(source.ok());
  std::atomic<int> bad{0}, waiting{8};
  std::vector<std::thread> threads;
  for (uint64_t i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      SampleBuffer buf;
      --waiting;
      while (waiting.load() > 0) std::this_thread::yield();  // all start together
      if (!(*source)->Read({0, i}, &buf).ok() ||
          BufferString(buf) != ExpectedSample(d.specs[0], i)) {
        ++bad;
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(bad == 0);
  CHECK(slow.stats().opens == 8);  // one np.load per sample, none more
}

TEST_CASE("data source errors name the file and sample", "[format][data_source]") {
  Dataset d(1);
  FormatDataSourceOptions options;
  options.samples_per_file = 4;  // planned with, without opening the files
  std::vector<std::string> files = d.files;
  files.push_back("/missing.npy");
  auto source = MakeFormatDataSource(d.storage.get(), d.format.get(), files, options);
  REQUIRE(source.ok());
  REQUIRE((*source)->samples_per_file() == std::vector<uint64_t>{4, 4});
  SampleBuffer buf;
  Status past = (*source)->Read({0, 4}, &buf);
  REQUIRE(past.code() == StatusCode::kOutOfRange);
  REQUIRE(past.message().find("/f0.npy sample 4") != std::string::npos);
  Status missing = (*source)->Read({1, 1}, &buf);
  REQUIRE(!missing.ok());
  REQUIRE(missing.message().find("/missing.npy sample 1") != std::string::npos);
  REQUIRE((*source)->Read({2, 0}, &buf).code() == StatusCode::kOutOfRange);

  // Without a trusted count, a missing file fails creation.
  auto strict = MakeFormatDataSource(d.storage.get(), d.format.get(), files, {});
  REQUIRE(!strict.ok());
  REQUIRE(strict.status().message().find("/missing.npy") != std::string::npos);
}

TEST_CASE("a planned sample count that disagrees with the file is an error naming both",
          "[format][data_source]") {
  // The count was trusted: with 2 planned for files of 4 (or 6 for files of 4), samples were read
  // from the wrong places, or past the file's end, without a word.
  Dataset d(2);
  for (uint64_t planned : {uint64_t{2}, uint64_t{6}}) {
    FormatDataSourceOptions options;
    options.samples_per_file = planned;
    auto source = MakeFormatDataSource(d.storage.get(), d.format.get(), d.files, options);
    REQUIRE(source.ok());
    SampleBuffer buf;
    Status st = (*source)->Read({1, 0}, &buf);
    INFO(st.ToString());
    REQUIRE(st.code() == StatusCode::kInvalidArgument);
    CHECK(st.message().find("/f1.npy holds 4 samples") != std::string::npos);
    CHECK(st.message().find("dataset.num_samples_per_file is " + std::to_string(planned)) !=
          std::string::npos);
  }
  FormatDataSourceOptions matching;
  matching.samples_per_file = 4;
  auto source = MakeFormatDataSource(d.storage.get(), d.format.get(), d.files, matching);
  REQUIRE(source.ok());
  SampleBuffer buf;
  REQUIRE((*source)->Read({1, 3}, &buf).ok());
  CHECK(BufferString(buf) == ExpectedSample(d.specs[1], 3));
}

TEST_CASE("synthetic data source needs no storage", "[format][data_source]") {
  auto fmt = MakeFormatByName("synthetic");
  FormatDataSourceOptions options;
  options.format.samples_per_file = 7;
  options.format.record_length_bytes = 3;
  auto source = MakeFormatDataSource(nullptr, fmt.get(), {"virt0", "virt1"}, options);
  REQUIRE(source.ok());
  REQUIRE((*source)->samples_per_file() == std::vector<uint64_t>{7, 7});
  SampleBuffer buf;
  REQUIRE((*source)->Read({1, 6}, &buf).ok());
  REQUIRE(buf.size() == 3);
  REQUIRE(buf.data()[0] == 6);
  REQUIRE((*source)->Read({1, 7}, &buf).code() == StatusCode::kOutOfRange);
}

}  // namespace
}  // namespace dlio::testing
