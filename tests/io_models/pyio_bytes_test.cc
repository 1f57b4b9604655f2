// Python's f.read() of a whole file and np.load of an .npy under reader.client_costs framework:
// the requests of BufferedReader.read() with no size (the buffered bytes, then FileIO.readall:
// one read of the rest plus one byte, then the read that finds the end) into a bytes object, and
// numpy.fromfile's fread into a new array, each allocated before the reads and left untouched, so
// that their pages fault in within the reads, as CPython's and numpy's do (a zero-filled buffer
// would fault them in before the reads, and the emulated reads would take a third of the real
// ones' time).
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dlio/clock.h"
#include "dlio/storage.h"
#include "dlio/storage_wrapper.h"
#include "io_models/pyio/buffered_reader.h"
#include "io_models/pyio/numpy_load.h"
#include "test_util.h"

namespace dlio {
namespace {

uint8_t ByteAt(uint64_t offset) { return static_cast<uint8_t>(offset * 7 + offset / 4096); }

// A file of `size` computed bytes under `dir` (written once), opened through a storage that
// records each read request and how many pages of its destination were resident when it came
// (mincore).
class ProbeStorage final : public StorageWrapper {
 public:
  struct Read {
    uint64_t offset = 0;
    size_t n = 0;
    size_t pages = 0, resident = 0;
  };
  ProbeStorage() : StorageWrapper("probe", NewPosixStorage(StorageOptions())) {
    Bind(SystemClock(), nullptr);
  }
  const std::vector<Read>& reads() const { return reads_; }

 protected:
  Result<std::unique_ptr<File>> DoOpen(const std::string& path, OpenMode mode,
                                       const FileOptions& options) override {
    DLIO_ASSIGN_OR_RETURN(std::unique_ptr<File> file, StorageWrapper::DoOpen(path, mode, options));
    return std::unique_ptr<File>(std::make_unique<ProbeFile>(std::move(file), this));
  }

 private:
  class ProbeFile final : public FileWrapper {
   public:
    ProbeFile(std::unique_ptr<File> inner, ProbeStorage* owner)
        : FileWrapper(std::move(inner)), owner_(owner) {}

   protected:
    Result<size_t> DoReadAt(uint64_t offset, size_t n, void* buf) override {
      owner_->Record(offset, n, buf);
      return FileWrapper::DoReadAt(offset, n, buf);
    }
    Result<size_t> DoReadSomeAt(uint64_t offset, size_t n, void* buf) override {
      owner_->Record(offset, n, buf);
      return FileWrapper::DoReadSomeAt(offset, n, buf);
    }

   private:
    ProbeStorage* owner_;
  };

  void Record(uint64_t offset, size_t n, const void* buf) {
    Read r{offset, n, 0, 0};
    const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    const uintptr_t begin = reinterpret_cast<uintptr_t>(buf) & ~(page - 1);
    const uintptr_t end = reinterpret_cast<uintptr_t>(buf) + n;
    std::vector<unsigned char> vec((end - begin + page - 1) / page);
    if (n > 0 && mincore(reinterpret_cast<void*>(begin), end - begin, vec.data()) == 0) {
      r.pages = vec.size();
      r.resident = static_cast<size_t>(
          std::count_if(vec.begin(), vec.end(), [](unsigned char v) { return (v & 1) != 0; }));
    }
    reads_.push_back(r);
  }

  std::vector<Read> reads_;
};

// The file `size` bytes of ByteAt under `tmp`; its path.
std::string WriteProbeFile(const testing::TempDir& tmp, uint64_t size) {
  std::string bytes(size, '\0');
  for (uint64_t i = 0; i < size; ++i) bytes[i] = static_cast<char>(ByteAt(i));
  const std::string path = tmp / "probe.npy";
  testing::WriteTextFile(path, bytes);
  return path;
}

bool HoldsFileBytes(const pyio::PythonBytes& bytes, uint64_t from) {
  for (size_t i = 0; i < bytes.size(); i += 4093) {
    if (bytes.data()[i] != ByteAt(from + i)) return false;
  }
  return bytes.size() == 0 || bytes.data()[bytes.size() - 1] == ByteAt(from + bytes.size() - 1);
}

TEST_CASE("pyio ReadAllObject: FileIO.readall's requests into a bytes object of fresh pages") {
  // Above glibc's largest dynamic mmap threshold (32 MiB on 64-bit), so the object is a mapping
  // of its own whatever this process freed before, as a large bytes object is in Python.
  const uint64_t size = 40ull << 20;
  testing::TempDir tmp;
  ProbeStorage storage;
  auto file = storage.Open(WriteProbeFile(tmp, size), OpenMode::kRead);
  REQUIRE(file.ok());
  pyio::BufferedReader fp(file->get(), 8192);
  Result<pyio::PythonBytes> bytes = fp.ReadAllObject();
  REQUIRE(bytes.ok());
  CHECK(bytes->size() == size);
  CHECK(HoldsFileBytes(*bytes, 0));
  const auto& reads = storage.reads();
  REQUIRE(reads.size() == 2);
  CHECK(reads[0].offset == 0);
  CHECK(reads[0].n == size + 1);  // the rest of the file and one byte more
  CHECK(reads[1].offset == size);
  CHECK(reads[1].n == 1);  // the read that finds the end
  // The object's pages were never touched before the read that fills them: of its 10,241 pages
  // at most those the allocator writes its bookkeeping to (glibc: the block header's page;
  // AddressSanitizer's allocator: a header and a redzone page), where a zero fill makes all
  // resident.
  REQUIRE(reads[0].pages >= size / 4096);
  CHECK(reads[0].resident <= 4);
}

TEST_CASE("pyio ReadAllObject: buffered bytes first, then the rest, joined") {
  const uint64_t size = 100000;
  testing::TempDir tmp;
  ProbeStorage storage;
  auto file = storage.Open(WriteProbeFile(tmp, size), OpenMode::kRead);
  REQUIRE(file.ok());
  pyio::BufferedReader fp(file->get(), 8192);
  std::vector<uint8_t> head(10);
  Result<size_t> got = fp.Read(head.size(), head.data());  // fills the 8 KiB buffer
  REQUIRE(got.ok());
  REQUIRE(*got == 10);
  Result<pyio::PythonBytes> rest = fp.ReadAllObject();
  REQUIRE(rest.ok());
  CHECK(rest->size() == size - 10);
  CHECK(HoldsFileBytes(*rest, 10));
  const auto& reads = storage.reads();
  REQUIRE(reads.size() == 3);
  CHECK(reads[0].offset == 0);
  CHECK(reads[0].n == 8192);
  CHECK(reads[1].offset == 8192);
  CHECK(reads[1].n == size - 8192 + 1);
  CHECK(reads[2].offset == size);
  CHECK(reads[2].n == 1);
  CHECK(fp.Position() == size);
}

// An .npy of uint8 data, `size` bytes in all (numpy's 128-byte header), under `tmp`; its path.
std::string WriteNpy(const testing::TempDir& tmp, uint64_t size) {
  std::string dict =
      "{'descr': '|u1', 'fortran_order': False, 'shape': (" + std::to_string(size - 128) + ",), }";
  dict.resize(128 - 10 - 1, ' ');
  dict += '\n';
  std::string bytes = "\x93NUMPY\x01";
  bytes.push_back('\0');
  bytes.push_back(static_cast<char>(dict.size() & 0xff));
  bytes.push_back(static_cast<char>(dict.size() >> 8));
  bytes += dict;
  bytes.resize(size, '\x5a');
  const std::string path = tmp / "a.npy";
  testing::WriteTextFile(path, bytes);
  return path;
}

TEST_CASE("np.load of an .npy: numpy.fromfile's fread into an array of fresh pages") {
  const uint64_t size = 40ull << 20;  // a mapping of its own, as above
  testing::TempDir tmp;
  ProbeStorage storage;
  auto file = storage.Open(WriteNpy(tmp, size), OpenMode::kRead);
  REQUIRE(file.ok());
  Result<pyio::LoadedArray> a = pyio::NumpyLoad(file->get(), "", pyio::NumpyBuffers{});
  REQUIRE(a.ok());
  REQUIRE(a->data.size() == size - 128);
  CHECK(a->data[0] == 0x5a);
  CHECK(a->data[a->data.size() - 1] == 0x5a);
  // The largest read is fread's of the array's data straight into the array: none of its pages
  // (but those holding the allocator's bookkeeping, as above) was touched before it.
  const auto& reads = storage.reads();
  REQUIRE(!reads.empty());
  const auto big = std::max_element(reads.begin(), reads.end(),
                                    [](const auto& x, const auto& y) { return x.n < y.n; });
  CHECK(big->n >= size - 128 - 4096);
  REQUIRE(big->pages >= (size - 128 - 4096) / 4096);
  CHECK(big->resident <= 4);
}

}  // namespace
}  // namespace dlio
