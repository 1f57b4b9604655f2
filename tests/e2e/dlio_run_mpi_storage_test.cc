// End-to-end tests of dlio-run's shared-file storages under mpiexec: mpiio's independent and
// collective reads against posix, and one HDF5 file written and read by all ranks with parallel
// HDF5 (DLIO's records_0..N-1 layout).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "e2e/mpi_run.h"

using dlio::testing::ReadPfwEvents;
using dlio::testing::ReadTextFile;
using dlio::testing::RunCommand;
using dlio::testing::TempDir;
using json = nlohmann::json;
using dlio::testing::DlioRun;
using dlio::testing::mpi_e2e::Folders;
using dlio::testing::mpi_e2e::Launch;
using dlio::testing::mpi_e2e::LoadJson;
using dlio::testing::mpi_e2e::MpiRun;
using dlio::testing::mpi_e2e::TraceOf;

TEST_CASE("mpiio storage: independent and collective reads move the same bytes as posix") {
  // One shared npz file of 16 samples read by 2 ranks: DLIO's shared-file pattern.
  const std::string dataset =
      " --set dataset.num_files_train=1 --set dataset.num_samples_per_file=16"
      " --set dataset.record_length_bytes=8192 --set reader.batch_size=2 --set train.epochs=2"
      " --set train.computation_time=0 --trace";
  const std::string sync = " --set reader.pipeline=sync --set reader.read_threads=0";
  struct Case {
    std::string name, args;
  };
  const std::vector<Case> cases = {
      {"posix", sync},
      {"mpiio independent, 2 read threads",
       " --set storage.storage_type=mpiio --set reader.read_threads=2"},
      {"mpiio collective", sync + " --set storage.storage_type=mpiio"
                                  " --set storage.mpiio_collective=true"},
  };
  std::vector<json> bytes_per_epoch;
  for (const Case& c : cases) {
    CAPTURE(c.name);
    TempDir dir;
    auto run = MpiRun(2, Folders(dir) + dataset + c.args);
    INFO(run.result.output);
    REQUIRE(run.result.exit_code == 0);
    json s = LoadJson(dir / "out/summary.json");
    for (const json& r : s["ranks"]) CHECK(r["samples"] == json::parse("[8, 8]"));
    // Sample bytes delivered per rank and epoch, from the per-step records.
    json per_rank = json::array();
    for (int r = 0; r < 2; ++r) {
      json out = LoadJson(dir / ("out/" + std::to_string(r) + "_output.json"));
      json epochs = json::array();
      for (const char* e : {"1", "2"}) {
        uint64_t sum = 0;
        for (const auto& block : out[e]["bytes"].items()) {
          for (const json& b : block.value()) sum += b.get<uint64_t>();
        }
        epochs.push_back(sum);
      }
      per_rank.push_back(epochs);
    }
    bytes_per_epoch.push_back(per_rank);
    size_t mpiio_reads = 0;
    for (int r = 0; r < 2; ++r) {
      for (const json& e : ReadPfwEvents(dir / TraceOf(r, 2))) {
        if (e.value("cat", "") == "MPIIO" && e.value("name", "") == "pread") ++mpiio_reads;
      }
    }
    if (c.name == "posix") {
      CHECK(mpiio_reads == 0);
    } else {
      CHECK(mpiio_reads >= 2u * 2 * 8);  // every sample of both epochs on both ranks
    }
  }
  CHECK(bytes_per_epoch[1] == bytes_per_epoch[0]);
  CHECK(bytes_per_epoch[2] == bytes_per_epoch[0]);
  CHECK(bytes_per_epoch[0] == json::parse("[[65536, 65536], [65536, 65536]]"));  // 8 x 8 KiB

  SECTION("collective reads refuse reader threads with a config error") {
    TempDir dir;
    auto bad = MpiRun(2, Folders(dir) + dataset +
                             " --set storage.storage_type=mpiio --set storage.mpiio_collective=true"
                             " --set reader.pipeline=sync --set reader.read_threads=4");
    INFO(bad.result.output);
    CHECK(bad.result.exit_code == 2);
    CHECK(bad.result.output.find("storage.mpiio_collective") != std::string::npos);
    CHECK(bad.result.output.find("reader.read_threads") != std::string::npos);
  }
  SECTION("without a launcher mpiio runs as an MPI singleton, and refuses the serial comm") {
    TempDir dir;
    auto single = Launch(DlioRun() + Folders(dir) + dataset + " --set storage.storage_type=mpiio");
    INFO(single.result.output);
    CHECK(single.result.exit_code == 0);
    auto serial = Launch(DlioRun() + Folders(dir) + dataset +
                         " --set storage.storage_type=mpiio --comm serial --no-generate");
    INFO(serial.result.output);
    CHECK(serial.result.exit_code == 1);
    CHECK(serial.result.output.find("needs MPI initialized") != std::string::npos);
  }
}

TEST_CASE("hdf5 shared file: written by all ranks, read with collective parallel HDF5") {
  const std::string dataset =
      " --set dataset.format=hdf5 --set dataset.num_files_train=1"
      " --set dataset.num_samples_per_file=16 --set dataset.record_length_bytes=8192"
      " --set reader.batch_size=2 --set train.epochs=1 --set train.computation_time=0 --trace"
      " --set storage.storage_type=mpiio";
  for (const bool collective : {true, false}) {
    CAPTURE(collective);
    TempDir dir;
    const std::string mode = collective ? " --set storage.mpiio_collective=true"
                                          " --set reader.pipeline=sync --set reader.read_threads=0"
                                        : " --set reader.read_threads=2";
    auto run = MpiRun(2, Folders(dir) + dataset + mode);
    INFO(run.result.output);
    REQUIRE(run.result.exit_code == 0);
    json s = LoadJson(dir / "out/summary.json");
    for (const json& r : s["ranks"]) CHECK(r["samples"] == json::parse("[8]"));
    size_t h5_reads = 0, h5_writes = 0, mpiio_reads = 0;
    for (int r = 0; r < 2; ++r) {
      for (const json& e : ReadPfwEvents(dir / TraceOf(r, 2))) {
        const std::string cat = e.value("cat", ""), name = e.value("name", "");
        if (cat == "HDF5" && name == "H5Dread") {
          ++h5_reads;
          CHECK(e["args"]["count"] == 8192);
          CHECK(e["args"]["offset"].get<int64_t>() > 0);
        }
        if (cat == "HDF5" && name == "H5Dwrite") ++h5_writes;
        if (cat == "MPIIO" && name == "pread") ++mpiio_reads;
      }
    }
    CHECK(h5_writes >= 2);  // both ranks wrote their rows
    if (collective) {
      CHECK(h5_reads == 16);  // one collective H5Dread per sample, 8 per rank
    } else {
      CHECK(h5_reads == 0);
      CHECK(mpiio_reads >= 16);  // through dlio's HDF5 driver over mpiio
    }
  }
}

// DLIO's shaped layout (record_dims, record_element_type, hdf5.num_dset_per_record) through the
// parallel-HDF5 writer: /records_0../records_<N-1> of the element type, each rank its rows, the
// same file byte for byte as the serial writer's (which h5py reads in hdf5_interop_test). Not under
// the sanitizers (mpiexec, a serial dlio-run and python: ~11 s there).
#ifndef DLIO_TEST_SANITIZED
TEST_CASE("hdf5 shared file: DLIO's records_0..N-1 of record_dims and element type") {
  const std::string dataset =
      " --quiet --no-train --set dataset.format=hdf5 --set dataset.num_files_train=1"
      " --set dataset.num_samples_per_file=8 --set dataset.record_dims=[4,3]"
      " --set dataset.record_element_type=float32 --set dataset.hdf5.num_dset_per_record=2";
  TempDir dir;
  auto shared = MpiRun(2, dataset + " --trace --set storage.storage_type=mpiio" +
                              " --set dataset.data_folder=" + dir / "shared" +
                              " --set output.folder=" + dir / "out");
  INFO(shared.result.output);
  REQUIRE(shared.result.exit_code == 0);
  auto serial = Launch(DlioRun() + dataset + " --set dataset.data_folder=" + dir / "serial" +
                       " --set output.folder=" + dir / "out-serial");
  INFO(serial.result.output);
  REQUIRE(serial.result.exit_code == 0);
  const std::string file = "/train/img_0_of_1.hdf5";
  const std::string bytes = ReadTextFile(dir / ("shared" + file));
  CHECK(bytes == ReadTextFile(dir / ("serial" + file)));
  // Each rank wrote its 4 rows (4 x 2 x 3 float32) of each of the two datasets.
  for (int r = 0; r < 2; ++r) {
    int writes = 0;
    for (const json& e : ReadPfwEvents(dir / ("out/trace-" + std::to_string(r) + "-of-2.pfw"))) {
      if (e.value("cat", "") != "HDF5" || e.value("name", "") != "H5Dwrite") continue;
      ++writes;
      CHECK(e["args"]["count"] == 4 * 2 * 3 * 4);
    }
    CHECK(writes == 2);
  }
  if (dlio::testing::SystemPython().empty()) return;  // h5py's view, where Debian's python is
  auto h5py = RunCommand(dlio::testing::SystemPython() +
                         " -c 'import h5py, sys; f = h5py.File(sys.argv[1], \"r\");"
                         " print(sorted((k, f[k].shape, f[k].dtype.str) for k in f))' " +
                         dir / ("shared" + file));
  INFO(h5py.output);
  REQUIRE(h5py.exit_code == 0);
  CHECK(h5py.output.find("[('labels', (8,), '<i8'), ('records_0', (8, 2, 3), '<f4'), "
                         "('records_1', (8, 2, 3), '<f4')]") != std::string::npos);
}
#endif
