// Shared one-file datasets under mpiexec: written by every rank together (npy and indexed_binary
// through Storage::WriteAt, hdf5 through parallel HDF5) with the bytes of a serial write, and hdf5
// read back with collective parallel-HDF5 transfers (traced at the samples' file offsets) or
// independently through dlio's file driver over the mpiio storage.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "dlio/generator.h"
#include "dlio/registries.h"
#include "dlio/storage.h"
#include "dlio/tracer.h"
#include "format/content.h"
#include "mpi_test_util.h"
#include "storage/mpiio_options.h"

namespace dlio {
namespace {

using testing::MpiTestComm;
using testing::SharedTempDir;

std::unique_ptr<Format> MakeFormatNamed(const std::string& name) {
  Registries r;
  REQUIRE(RegisterBuiltinFormats(&r.formats).ok());
  auto factory = r.formats.Get(name);
  REQUIRE(factory.ok());
  auto format = (*factory)();
  REQUIRE(format.ok());
  return std::move(format).value();
}

std::unique_ptr<Storage> MakeStorageNamed(const StorageOptions& options, Tracer* tracer) {
  Registries r;
  REQUIRE(RegisterBuiltinStorages(&r.storages).ok());
  auto storage = MakeStorage(options, r.storages, SystemClock(), tracer);
  REQUIRE(storage.ok());
  return std::move(storage).value();
}

std::vector<uint8_t> ReadWholeFile(const std::string& path) {
  auto storage = NewPosixStorage(StorageOptions{});
  auto file = storage->Open(path, OpenMode::kRead);
  REQUIRE(file.ok());
  auto size = (*file)->Size();
  REQUIRE(size.ok());
  std::vector<uint8_t> bytes(*size);
  REQUIRE((*file)->ReadExactAt(0, bytes.size(), bytes.data()).ok());
  return bytes;
}

DatasetConfig OneFile(const std::string& folder, const std::string& format, uint64_t stdev) {
  DatasetConfig d;
  d.data_folder = folder;
  d.format = format;
  d.num_files_train = 1;
  d.num_samples_per_file = 13;  // uneven over 2 and 4 ranks
  d.record_length_bytes = 3000;
  d.record_length_bytes_stdev = stdev;
  return d;
}

TEST_CASE("a one-file dataset written by all ranks has the bytes of a serial write") {
  Comm* comm = MpiTestComm();
  struct Case {
    std::string format, storage;
    uint64_t stdev;
  };
  const std::vector<Case> cases = {
      {"npy", "posix", 0},  {"npy", "mpiio", 0},  {"indexed_binary", "posix", 700},
      {"hdf5", "posix", 0}, {"hdf5", "mpiio", 0}, {"hdf5", "posix", 700},
  };
  for (const Case& c : cases) {
    CAPTURE(c.format, c.storage, c.stdev, comm->size());
    SharedTempDir dir;
    auto format = MakeFormatNamed(c.format);
    StorageOptions so;
    so.name = c.storage;
    MemoryTracer tracer;
    auto storage = MakeStorageNamed(so, &tracer);
    const DatasetConfig serial = OneFile(dir / "serial", c.format, c.stdev);
    const DatasetConfig parallel = OneFile(dir / "parallel", c.format, c.stdev);
    if (comm->rank() == 0) {
      GenerateOptions go;  // rank 0 of a world of 1: the serial writer
      auto r = GenerateDataset(serial, *format, FormatOptions{}, storage.get(), go);
      INFO((r.ok() ? std::string() : r.status().ToString()));
      REQUIRE(r.ok());
    }
    GenerateOptions go;
    go.rank = comm->rank();
    go.world = comm->size();
    go.barrier = [comm] { return comm->Barrier(); };
    go.comm = comm;
    auto report = GenerateDataset(parallel, *format, FormatOptions{}, storage.get(), go);
    INFO((report.ok() ? std::string() : report.status().ToString()));
    REQUIRE(report.ok());
    // Rank 0 counts the shared file; every rank wrote some of it.
    CHECK(report->files_written == (comm->rank() == 0 ? 1u : 0u));
    uint64_t writes = 0;
    for (const TraceEvent& e : tracer.Events()) {
      if (std::string(e.name) == "pwrite" || std::string(e.name) == "H5Dwrite") ++writes;
    }
    CHECK(writes > 0);
    REQUIRE(comm->Barrier().ok());
    if (comm->rank() == 0) {
      const auto files = DatasetFiles(serial, *format, Split::kTrain);
      const auto pfiles = DatasetFiles(parallel, *format, Split::kTrain);
      REQUIRE(files.size() == 1);
      std::vector<std::string> all = {files[0]}, pall = {pfiles[0]};
      if (c.format == "indexed_binary") {
        all = {files[0], files[0] + ".off.idx", files[0] + ".sz.idx"};
        pall = {pfiles[0], pfiles[0] + ".off.idx", pfiles[0] + ".sz.idx"};
      }
      for (size_t k = 0; k < all.size(); ++k) {
        CAPTURE(pall[k]);
        CHECK(ReadWholeFile(pall[k]) == ReadWholeFile(all[k]));
      }
      // No staging folder is left behind.
      for (const auto& e : std::filesystem::directory_iterator(dir / "parallel/train")) {
        CHECK(e.path().filename().string().rfind(".dlio-tmp", 0) != 0);
      }
      if (c.format == "hdf5") {  // h5py reads the parallel-written file
        auto py = testing::RunCommand(testing::SystemPython() +
                                      " -c \"import h5py,sys; f=h5py.File(sys.argv[1],'r'); "
                                      "print(len(f['labels']))\" " +
                                      pfiles[0]);
        INFO(py.output);
        CHECK(py.exit_code == 0);
        CHECK(py.output.find("13") != std::string::npos);
      }
    }
  }
}

// Samples i = rank, rank + world, ... : the same number on every rank.
std::vector<uint64_t> MySamples(uint64_t n, int rank, int world) {
  std::vector<uint64_t> mine;
  const uint64_t per_rank = n / static_cast<uint64_t>(world);
  for (uint64_t k = 0; k < per_rank; ++k) mine.push_back(k * world + rank);
  return mine;
}

TEST_CASE("hdf5 over mpiio: collective parallel-HDF5 reads and independent driver reads") {
  Comm* comm = MpiTestComm();
  SharedTempDir dir;
  auto format = MakeFormatNamed("hdf5");
  const DatasetConfig d = OneFile(dir / "data", "hdf5", 0);
  {
    auto storage = MakeStorageNamed(StorageOptions{}, nullptr);
    GenerateOptions go;
    go.rank = comm->rank();
    go.world = comm->size();
    go.barrier = [comm] { return comm->Barrier(); };
    go.comm = comm;
    REQUIRE(GenerateDataset(d, *format, FormatOptions{}, storage.get(), go).ok());
  }
  REQUIRE(comm->Barrier().ok());
  const std::string path = DatasetFiles(d, *format, Split::kTrain)[0];
  const FileSpec spec = DatasetFileSpec(d, *format, Split::kTrain, 0, GenerateOptions{}.seed);
  const std::vector<uint8_t> whole = ReadWholeFile(path);

  for (const bool collective : {true, false}) {
    CAPTURE(collective);
    StorageOptions so;
    so.name = "mpiio";
    so.backends.Get<MpiioOptions>().collective = collective;
    MemoryTracer tracer;
    auto storage = MakeStorageNamed(so, &tracer);
    CHECK((storage->CollectiveMpiComm(path) != nullptr) == collective);
    {
      auto reader = format->Open(storage.get(), path, FormatOptions{});
      INFO((reader.ok() ? std::string() : reader.status().ToString()));
      REQUIRE(reader.ok());
      REQUIRE((*reader)->num_samples() == 13);
      SampleBuffer buf;
      for (uint64_t i : MySamples(13, comm->rank(), comm->size())) {
        REQUIRE((*reader)->ReadSample(i, &buf).ok());
        std::vector<uint8_t> want(3000);
        format_internal::FillSampleBytes(spec.seed, i, 0, want.data(), want.size());
        CHECK(std::vector<uint8_t>(buf.data(), buf.data() + buf.size()) == want);
      }
    }  // H5Fclose (collective with parallel HDF5)
    size_t h5_reads = 0, mpiio_reads = 0;
    for (const TraceEvent& e : tracer.Events()) {
      const std::string name = e.name, cat = e.cat;
      if (cat == "MPIIO" && name == "pread") ++mpiio_reads;
      if (cat == "HDF5" && name == "H5Dread") {
        ++h5_reads;
        // The traced offset is where the sample's bytes lie in the file.
        REQUIRE(e.offset >= 0);
        REQUIRE(e.count == 3000);
        REQUIRE(static_cast<size_t>(e.offset + e.count) <= whole.size());
        CHECK(tracer.FileName(e.file_id) == path);
        bool found = false;
        for (uint64_t i : MySamples(13, comm->rank(), comm->size())) {
          std::vector<uint8_t> want(3000);
          format_internal::FillSampleBytes(spec.seed, i, 0, want.data(), want.size());
          if (std::equal(want.begin(), want.end(), whole.begin() + e.offset)) found = true;
        }
        CHECK(found);
      }
    }
    const size_t mine = MySamples(13, comm->rank(), comm->size()).size();
    if (collective) {
      CHECK(h5_reads == mine);
      CHECK(mpiio_reads == 0);  // HDF5's MPI-IO driver bypasses the storage
      CHECK(storage->stats().read_bytes == mine * 3000);
    } else {
      CHECK(h5_reads == 0);
      CHECK(mpiio_reads >= mine);  // through dlio's driver: superblock, headers, samples
    }
    REQUIRE(comm->Barrier().ok());
  }
}

}  // namespace
}  // namespace dlio
