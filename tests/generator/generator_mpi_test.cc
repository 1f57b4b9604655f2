// Generation under mpiexec: rank 0 holds the generation lock for every rank, and a failure on
// any rank fails all of them.
#include <catch2/catch.hpp>
#include <filesystem>
#include <memory>
#include <string>

#include "dlio/generator.h"
#include "dlio/registries.h"
#include "dlio/storage.h"
#include "mpi_test_util.h"

namespace dlio {
namespace {

using testing::MpiTestComm;
using testing::SharedTempDir;

std::unique_ptr<Format> Npz() {
  Registries r;
  REQUIRE(RegisterBuiltinFormats(&r.formats).ok());
  auto factory = r.formats.Get("npz");
  REQUIRE(factory.ok());
  auto format = (*factory)();
  REQUIRE(format.ok());
  return std::move(format).value();
}

DatasetConfig Dataset(const std::string& folder) {
  DatasetConfig d;
  d.data_folder = folder;
  d.format = "npz";
  d.num_files_train = 8;
  d.num_files_eval = 0;
  d.num_samples_per_file = 2;
  d.record_length_bytes = 1000;
  return d;
}

GenerateOptions AllRanks(Comm* comm) {
  GenerateOptions go;
  go.rank = comm->rank();
  go.world = comm->size();
  go.barrier = [comm] { return comm->Barrier(); };
  go.comm = comm;
  return go;
}

TEST_CASE("a folder locked by another generation is refused on every rank, before any write") {
  Comm* comm = MpiTestComm();
  SharedTempDir dir;
  auto format = Npz();
  auto storage = NewPosixStorage(StorageOptions{});
  const DatasetConfig d = Dataset(dir / "data");
  std::unique_ptr<StorageLock> other;  // another run's rank 0
  if (comm->rank() == 0) {
    REQUIRE(storage->CreateDirs(d.data_folder).ok());
    auto lock = storage->TryLock(d.data_folder + "/.dlio-generate.lock");
    REQUIRE(lock.ok());
    REQUIRE(*lock != nullptr);
    other = std::move(lock).value();
  }
  REQUIRE(comm->Barrier().ok());
  auto refused = GenerateDataset(d, *format, FormatOptions{}, storage.get(), AllRanks(comm));
  REQUIRE_FALSE(refused.ok());
  INFO(refused.status().ToString());
  if (comm->rank() == 0) {
    CHECK(refused.status().code() == StatusCode::kAlreadyExists);
    CHECK(refused.status().message().find("data folder " + d.data_folder + " is being generated") ==
          0);
  } else {
    CHECK(refused.status().code() == StatusCode::kCancelled);
  }
  REQUIRE(comm->Barrier().ok());
  CHECK_FALSE(std::filesystem::exists(d.data_folder + "/train"));  // no rank wrote anything
  other.reset();
  REQUIRE(comm->Barrier().ok());

  auto done = GenerateDataset(d, *format, FormatOptions{}, storage.get(), AllRanks(comm));
  INFO(done.status().ToString());
  REQUIRE(done.ok());
  const uint64_t rank = static_cast<uint64_t>(comm->rank());
  const uint64_t world = static_cast<uint64_t>(comm->size());
  CHECK(done->files_written == (8 - rank + world - 1) / world);
  REQUIRE(comm->Barrier().ok());
  CHECK_FALSE(std::filesystem::exists(d.data_folder + "/.dlio-generate.lock"));
}

TEST_CASE("a failure on one rank fails every rank and releases the lock") {
  Comm* comm = MpiTestComm();
  if (comm->size() < 2) return;
  SharedTempDir dir;
  auto format = Npz();
  auto storage = NewPosixStorage(StorageOptions{});
  const DatasetConfig d = Dataset(dir / "data");
  REQUIRE(GenerateDataset(d, *format, FormatOptions{}, storage.get(), AllRanks(comm)).ok());
  // A directory where rank 1's file 1 was: rank 1 fails, the others succeed on their own.
  const std::string file = DatasetFiles(d, *format, Split::kTrain)[1];
  if (comm->rank() == 0) {
    REQUIRE(storage->Remove(file).ok());
    REQUIRE(storage->CreateDirs(file).ok());
  }
  REQUIRE(comm->Barrier().ok());
  auto r = GenerateDataset(d, *format, FormatOptions{}, storage.get(), AllRanks(comm));
  REQUIRE_FALSE(r.ok());
  INFO(r.status().ToString());
  if (comm->rank() == 1) {
    CHECK(r.status().message().find(file) != std::string::npos);
  } else {
    CHECK(r.status().code() == StatusCode::kCancelled);
  }
  REQUIRE(comm->Barrier().ok());
  CHECK_FALSE(std::filesystem::exists(d.data_folder + "/.dlio-generate.lock"));
}

}  // namespace
}  // namespace dlio
