// The mpiio storage under mpiexec: independent and collective reads return exactly the bytes
// POSIX reads, writes are readable by POSIX, and misuse of a collective file is an error.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "dlio/registries.h"
#include "dlio/storage.h"
#include "dlio/tracer.h"
#include "mpi_test_util.h"
#include "storage/mpiio_options.h"

namespace dlio {
namespace {

using testing::MpiTestComm;
using testing::SharedTempDir;

std::vector<uint8_t> MpiioPattern(size_t n, uint64_t seed) {
  std::vector<uint8_t> v(n);
  uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 1;
  for (size_t i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    v[i] = static_cast<uint8_t>(x);
  }
  return v;
}

std::unique_ptr<Storage> Make(const StorageOptions& options, Tracer* tracer = nullptr) {
  Registries registries;
  REQUIRE(RegisterBuiltinStorages(&registries.storages).ok());
  auto storage = MakeStorage(options, registries.storages, SystemClock(), tracer);
  REQUIRE(storage.ok());
  return std::move(storage).value();
}

StorageOptions Mpiio(bool collective = false, std::vector<std::string> dirs = {}) {
  StorageOptions o;
  o.name = "mpiio";
  o.backends.Get<MpiioOptions>().collective = collective;
  o.data_dirs = std::move(dirs);
  return o;
}

// Rank 0 writes `bytes` at `path` through POSIX; every rank returns after it is there.
void WriteShared(const std::string& path, const std::vector<uint8_t>& bytes) {
  Comm* comm = MpiTestComm();
  if (comm->rank() == 0) {
    auto posix = NewPosixStorage(StorageOptions{});
    auto f = posix->Open(path, OpenMode::kWrite);
    REQUIRE(f.ok());
    REQUIRE((*f)->WriteAt(0, bytes.data(), bytes.size()).ok());
    REQUIRE((*f)->Close().ok());
  }
  REQUIRE(comm->Barrier().ok());
}

std::vector<uint8_t> PosixRead(const std::string& path, uint64_t offset, size_t n) {
  auto posix = NewPosixStorage(StorageOptions{});
  auto f = posix->Open(path, OpenMode::kRead);
  REQUIRE(f.ok());
  std::vector<uint8_t> out(n);
  auto got = (*f)->ReadAt(offset, n, out.data());
  REQUIRE(got.ok());
  out.resize(*got);
  return out;
}

TEST_CASE("mpiio: independent reads equal POSIX reads of a shared file", "[mpi]") {
  Comm* comm = MpiTestComm();
  SharedTempDir dir;
  const std::string path = dir / "shared.bin";
  const size_t size = (3u << 20) + 12345;  // not a multiple of anything
  WriteShared(path, MpiioPattern(size, 42));

  MemoryTracer tracer;
  auto storage = Make(Mpiio(), &tracer);
  CHECK(storage->name() == "mpiio");
  auto f = storage->Open(path, OpenMode::kRead);
  REQUIRE(f.ok());
  CHECK(*(*f)->Size() == size);
  // Each rank reads its own pseudo-random ranges, some crossing the end of the file.
  uint64_t x = 1234567u + static_cast<uint64_t>(comm->rank()) * 7919u;
  std::vector<uint8_t> buf;
  uint64_t bytes = 0;
  for (int i = 0; i < 40; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const uint64_t offset = (x >> 20) % (size + 100);
    const size_t n = static_cast<size_t>((x >> 8) % 300000) + 1;
    buf.assign(n, 0);
    auto got = (*f)->ReadAt(offset, n, buf.data());
    REQUIRE(got.ok());
    const auto want = PosixRead(path, offset, n);
    REQUIRE(*got == want.size());
    buf.resize(*got);
    CHECK(buf == want);
    bytes += *got;
  }
  REQUIRE((*f)->Close().ok());
  CHECK(storage->stats().read_ops == 40);
  CHECK(storage->stats().read_bytes == bytes);
  size_t preads = 0;
  for (const auto& e : tracer.Events()) {
    if (std::string(e.name) == "pread") {
      ++preads;
      CHECK(std::string(e.cat) == "MPIIO");
      CHECK(tracer.FileName(e.file_id) == path);
    }
  }
  CHECK(preads == 40);
}

TEST_CASE("mpiio: collective reads (MPI_File_read_at_all) equal POSIX reads", "[mpi]") {
  Comm* comm = MpiTestComm();
  const int r = comm->rank();
  const int n = comm->size();
  SharedTempDir dir;
  const std::string path = dir / "data/train/shared.bin";
  const size_t block = 65536 + 17;
  const size_t size = block * static_cast<size_t>(n) - 1000;  // the last rank's block is short
  if (r == 0) REQUIRE(NewPosixStorage(StorageOptions{})->CreateDirs(dir / "data/train").ok());
  WriteShared(path, MpiioPattern(size, 7));

  auto storage = Make(Mpiio(/*collective=*/true, {dir / "data/train/"}));
  auto f = storage->Open(path, OpenMode::kRead);  // collective open on every rank
  REQUIRE(f.ok());
  // Every rank makes the same number of calls (8 pieces of its block), with its own offsets.
  const size_t piece = (block + 7) / 8;
  std::vector<uint8_t> mine(block, 0);
  size_t have = 0;
  for (int k = 0; k < 8; ++k) {
    const uint64_t offset = static_cast<uint64_t>(r) * block + static_cast<uint64_t>(k) * piece;
    const size_t want = std::min(piece, block - static_cast<size_t>(k) * piece);
    auto got = (*f)->ReadAt(offset, want, mine.data() + have);
    REQUIRE(got.ok());
    have += *got;
  }
  mine.resize(have);
  const auto expect = PosixRead(path, static_cast<uint64_t>(r) * block, block);
  CHECK(mine == expect);
  CHECK(have == (r == n - 1 ? block - 1000 : block));
  REQUIRE((*f)->Close().ok());  // collective close

  // Outside the collective folder a read-only open stays independent: rank 0 alone may read.
  WriteShared(dir / "marker.json", MpiioPattern(100, 1));
  if (r == 0) {
    auto g = storage->Open(dir / "marker.json", OpenMode::kRead);
    REQUIRE(g.ok());
    std::vector<uint8_t> m(100);
    REQUIRE((*g)->ReadExactAt(0, 100, m.data()).ok());
    CHECK(m == MpiioPattern(100, 1));
  }
  REQUIRE(comm->Barrier().ok());
}

TEST_CASE("mpiio: a collective file refuses calls from another thread", "[mpi]") {
  SharedTempDir dir;
  WriteShared(dir / "c.bin", MpiioPattern(4096, 3));
  auto storage = Make(Mpiio(/*collective=*/true));  // every read-only open is collective
  auto f = storage->Open(dir / "c.bin", OpenMode::kRead);
  REQUIRE(f.ok());
  Status from_thread;
  std::thread t([&] {
    std::vector<uint8_t> buf(16);
    from_thread = (*f)->ReadAt(0, 16, buf.data()).status();
  });
  t.join();
  CHECK(from_thread.code() == StatusCode::kFailedPrecondition);
  CHECK_THAT(from_thread.message(), Catch::Contains("read_threads"));
  std::vector<uint8_t> buf(4096);
  REQUIRE((*f)->ReadExactAt(0, 4096, buf.data()).ok());  // the owning thread still may
  CHECK(buf == MpiioPattern(4096, 3));
  REQUIRE((*f)->Close().ok());
}

TEST_CASE("mpiio: each rank's writes (MPI_File_write_at) are readable through POSIX", "[mpi]") {
  Comm* comm = MpiTestComm();
  const int r = comm->rank();
  SharedTempDir dir;
  auto storage = Make(Mpiio(/*collective=*/true, {dir / "train"}));  // writes are never collective
  const std::string mine = dir / ("rank" + std::to_string(r) + ".bin");
  const auto data = MpiioPattern(200000 + static_cast<size_t>(r), 100 + static_cast<uint64_t>(r));
  {
    auto f = storage->Open(mine, OpenMode::kCreateNew);
    REQUIRE(f.ok());
    for (size_t off = 0; off < data.size(); off += 65536) {
      const size_t n = std::min<size_t>(65536, data.size() - off);
      REQUIRE((*f)->WriteAt(off, data.data() + off, n).ok());
    }
    REQUIRE((*f)->Sync().ok());
    REQUIRE((*f)->Close().ok());
  }
  CHECK(storage->Open(mine, OpenMode::kCreateNew).status().code() == StatusCode::kAlreadyExists);
  CHECK(storage->stats().write_bytes == data.size());
  REQUIRE(comm->Barrier().ok());
  // Every rank checks every rank's file.
  for (int other = 0; other < comm->size(); ++other) {
    const std::string path = dir / ("rank" + std::to_string(other) + ".bin");
    const auto expect =
        MpiioPattern(200000 + static_cast<size_t>(other), 100 + static_cast<uint64_t>(other));
    CHECK(PosixRead(path, 0, expect.size() + 10) == expect);
  }
}

}  // namespace
}  // namespace dlio
