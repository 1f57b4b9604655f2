// reader.client_costs none: a sample the numpy model reads lands straight in the buffer the
// sample was asked into (a pytorch worker's batch slot), with no buffer of dlio's between the
// storage and it, the file's first np.load (its open) included. The calls the storage sees are
// held equal to client_costs framework's by client_costs_test; here, where each read's bytes
// went: a decorator records the destination of every read.
#include <catch2/catch.hpp>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "../format/format_test_util.h"
#include "dlio/data_source.h"
#include "dlio/storage_wrapper.h"

namespace dlio::testing {
namespace {

// Records where each read's bytes were put.
class DestinationStorage final : public StorageWrapper {
 public:
  struct Landed {
    const uint8_t* dst;
    size_t got;
  };
  explicit DestinationStorage(std::unique_ptr<Storage> inner)
      : StorageWrapper("destinations", std::move(inner)) {}

  std::vector<Landed> Take() {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<Landed> out;
    out.swap(reads_);
    return out;
  }

 protected:
  Result<std::unique_ptr<File>> DoOpen(const std::string& path, OpenMode mode,
                                       const FileOptions& options) override {
    DLIO_ASSIGN_OR_RETURN(std::unique_ptr<File> file, StorageWrapper::DoOpen(path, mode, options));
    return std::unique_ptr<File>(std::make_unique<RecordingFile>(std::move(file), this));
  }

 private:
  class RecordingFile final : public FileWrapper {
   public:
    RecordingFile(std::unique_ptr<File> inner, DestinationStorage* owner)
        : FileWrapper(std::move(inner)), owner_(owner) {}

   protected:
    Result<size_t> DoReadAt(uint64_t offset, size_t n, void* buf) override {
      DLIO_ASSIGN_OR_RETURN(const size_t got, FileWrapper::DoReadAt(offset, n, buf));
      owner_->Record(buf, got);
      return got;
    }
    Result<size_t> DoReadSomeAt(uint64_t offset, size_t n, void* buf) override {
      DLIO_ASSIGN_OR_RETURN(const size_t got, FileWrapper::DoReadSomeAt(offset, n, buf));
      owner_->Record(buf, got);
      return got;
    }

   private:
    DestinationStorage* owner_;
  };

  void Record(const void* dst, size_t got) {
    std::lock_guard<std::mutex> lock(mu_);
    reads_.push_back({static_cast<const uint8_t*>(dst), got});
  }

  std::mutex mu_;
  std::vector<Landed> reads_;
};

// Bytes of `reads` that landed inside [begin, begin + size).
uint64_t BytesInside(const std::vector<DestinationStorage::Landed>& reads, const uint8_t* begin,
                     uint64_t size) {
  uint64_t inside = 0;
  for (const auto& r : reads) {
    if (r.dst >= begin && r.dst + r.got <= begin + size) inside += r.got;
  }
  return inside;
}

TEST_CASE("client_costs none: the numpy model reads a sample straight into the caller's buffer",
          "[io_models][client_costs]") {
  // format, samples per file (of samples larger than numpy's 256 KiB pieces, so that an npz's
  // samples start and end inside pieces).
  const auto [name, samples] = GENERATE(table<std::string, uint64_t>({
      {"npz", 1},
      {"npz", 3},
      {"npy", 1},
  }));
  constexpr uint64_t kSampleBytes = 1200000;
  constexpr uint64_t kPiece = uint64_t{1} << 18;  // numpy's read_array piece (an npz member's)
  // Some bytes reach the sample through Python's or glibc's 4 KiB buffer, as in Python (the
  // fill that reads a header brings the data's first bytes; a read of a piece whose end is not
  // on a block boundary takes its tail from a buffer fill); and an npz's sample that starts or
  // ends inside a piece gets that piece's part copied from the read that holds it.
  const uint64_t through_buffers =
      (kSampleBytes / kPiece + 2) * 8192 + (samples == 1 ? 0 : 2 * kPiece);
  DestinationStorage storage(BoundMemoryStorage());
  storage.Bind(SystemClock(), nullptr);
  auto format = MakeFormatByName(name);
  REQUIRE(format != nullptr);
  REQUIRE(storage.CreateDirs("/d").ok());
  std::vector<std::string> files;
  std::vector<FileSpec> specs;
  for (int f = 0; f < 2; ++f) {
    FileSpec spec;
    spec.seed = 70 + f;
    spec.sample_sizes.assign(samples, kSampleBytes);
    files.push_back("/d/f" + std::to_string(f) + "." + name);
    REQUIRE(format->Write(&storage, files.back(), spec, {}).ok());
    specs.push_back(spec);
  }
  FormatDataSourceOptions options;
  options.format.io_model = IoModel::kNumpy;
  options.format.framework_client_costs = false;
  options.format.samples_per_file = samples;
  options.samples_per_file = samples;
  options.max_open_files = 1;  // each file opened again: its open's load serves a sample
  auto source = MakeFormatDataSource(&storage, format.get(), files, options);
  REQUIRE(source.ok());
  (void)storage.Take();
  std::vector<uint8_t> slot(kSampleBytes + 4096);  // a batch slot's place for one sample
  for (uint32_t f = 0; f < 2; ++f) {
    for (uint64_t i = 0; i < samples; ++i) {
      INFO(name << " x" << samples << ", file " << f << " sample " << i);
      SampleBuffer out;
      out.Borrow(slot.data(), slot.size());
      REQUIRE((*source)->Read({f, i}, &out).ok());
      REQUIRE(out.data() == slot.data());
      CHECK(BufferString(out) == ExpectedSample(specs[f], i));
      const std::vector<DestinationStorage::Landed> reads = storage.Take();
      REQUIRE(!reads.empty());
      CHECK(BytesInside(reads, slot.data(), slot.size()) + through_buffers >= kSampleBytes);
    }
  }
}

}  // namespace
}  // namespace dlio::testing
