// End-to-end tests of dlio-run on files it did not write: datasets the Python DLIO generated
// (samples on the last axis of x), and `inspect`'s exit status on what it finds.
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "test_util.h"

namespace fs = std::filesystem;
using dlio::testing::CommandResult;
using dlio::testing::ReadTextFile;
using dlio::testing::RunCommand;
using dlio::testing::SystemPython;
using dlio::testing::TempDir;
using dlio::testing::WriteTextFile;
using json = nlohmann::json;

namespace {

using dlio::testing::DlioRun;

CommandResult Run(const std::string& args) { return RunCommand(DlioRun() + " " + args); }

CommandResult Python(const TempDir& dir, const std::string& script) {
  WriteTextFile(dir / "gen.py", script);
  return RunCommand(SystemPython() + " " + dir / "gen.py" + " " + dir.path());
}

// The Python DLIO's npz/npy generators, as data_generator/npz_generator.py writes them, for 4
// training files of `n` samples of dim x dim bytes under <dir>/data/train.
std::string DlioGenerator(int dim, int n) {
  return R"(
import os, sys
import numpy as np
d = sys.argv[1] + '/data/train'
os.makedirs(d, exist_ok=True)
np.random.seed(10)
for i in range(4):
    records = np.random.randint(255, size=()" +
         std::to_string(dim) + ", " + std::to_string(dim) + ", " + std::to_string(n) +
         R"(), dtype=np.uint8)
    np.savez(f'{d}/img_{i}_of_4.npz', x=records, y=[0] * records.shape[-1])
    np.save(f'{d}/img_{i}_of_4.npy', records)
)";
}

// Trains one epoch on the files in <dir>/data without generating.
std::string TrainArgs(const TempDir& dir, const std::string& format, int samples, int record) {
  return " --quiet --no-generate --set dataset.data_folder=" + dir / "data" +
         " --set output.folder=" + dir / ("out-" + format) + " --set dataset.format=" + format +
         " --set dataset.num_files_train=4 --set dataset.num_samples_per_file=" +
         std::to_string(samples) + " --set dataset.record_length_bytes=" + std::to_string(record) +
         " --set reader.batch_size=1 --set train.epochs=1 --set train.computation_time=0" +
         " --set reader.read_threads=1";
}

uint64_t ReadBytes(const TempDir& dir, const std::string& format) {
  return json::parse(ReadTextFile(dir / ("out-" + format + "/summary.json")))["io"]["read_bytes"]
      .get<uint64_t>();
}

}  // namespace

TEST_CASE("dlio-run trains on a Python-DLIO dataset reading each sample as DLIO does") {
  TempDir dir;
  const int dim = 23, n = 3, record = dim * dim;
  const CommandResult gen = Python(dir, DlioGenerator(dim, n));
  INFO(gen.output);
  REQUIRE(gen.exit_code == 0);
  for (const std::string format : {"npz", "npy"}) {
    INFO(format);
    const CommandResult r = Run(TrainArgs(dir, format, n, record));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    // DLIO's np.load reads the whole array for each sample: 4 x 3 samples x (3 x 529) bytes,
    // plus headers. Along the first axis dlio read 3 rows of 69 bytes of each file (2.5 KB).
    const uint64_t bytes = ReadBytes(dir, format);
    CHECK(bytes >= 4ull * n * n * record);
    CHECK(bytes <= 4ull * n * (n * record + 4096));
  }
}

TEST_CASE("a num_samples_per_file that disagrees with the files is an error naming both") {
  TempDir dir;
  const CommandResult gen = Python(dir, DlioGenerator(23, 3));
  INFO(gen.output);
  REQUIRE(gen.exit_code == 0);
  const CommandResult r = Run(TrainArgs(dir, "npz", 2, 529));
  INFO(r.output);
  CHECK(r.exit_code == 1);
  // Under reader.io_model numpy (npz's default) the labels are not read (np.load(path)['x'] does
  // not touch y): neither axis of (23, 23, 3) has 2 entries, so sample_layout's first axis counts.
  CHECK(r.output.find("img_0_of_4.npz holds 23 samples, but dataset.num_samples_per_file is 2") !=
        std::string::npos);
  // native reads the labels' length.
  const CommandResult native = Run(TrainArgs(dir, "npz", 2, 529) + " --set reader.io_model=native");
  INFO(native.output);
  CHECK(native.output.find("img_0_of_4.npz holds 3 samples, but dataset.num_samples_per_file is "
                           "2") != std::string::npos);
}

TEST_CASE("dlio-run inspect says how a DLIO file is read, and exits 1 on problems it finds") {
  TempDir dir;
  const CommandResult gen = Python(dir, DlioGenerator(23, 3));
  INFO(gen.output);
  REQUIRE(gen.exit_code == 0);

  auto npz = Run("inspect " + dir / "data/train/img_0_of_4.npz");
  INFO(npz.output);
  REQUIRE(npz.exit_code == 0);
  const json j = json::parse(npz.output);
  CHECK(j["sample_layout"] == "last_axis");
  CHECK(j["layout_basis"] == "labels");
  CHECK(j["num_samples"] == 3);
  CHECK(j["sample_size"]["max"] == 529);
  // An npy has no labels: the flag tells (or, in a run, num_samples_per_file).
  auto npy = Run("inspect --sample-layout last_axis " + dir / "data/train/img_0_of_4.npy");
  INFO(npy.output);
  REQUIRE(npy.exit_code == 0);
  CHECK(json::parse(npy.output)["num_samples"] == 3);

  SECTION("an empty csv") {
    WriteTextFile(dir / "empty.csv", "");
    auto r = Run("inspect " + dir / "empty.csv");
    CHECK(r.exit_code == 1);
    CHECK(r.output.find("dlio-run: problem: " + dir / "empty.csv" + ": no data rows") !=
          std::string::npos);
  }
  SECTION("a tfrecord file whose CRC fails") {
    const std::string data = dir / "tf";
    auto gen_tf =
        Run("--quiet --generate --no-train --set dataset.format=tfrecord"
            " --set dataset.data_folder=" +
            data + " --set output.folder=" + dir / "out" +
            " --set dataset.num_files_train=1 --set dataset.num_samples_per_file=2"
            " --set dataset.record_length_bytes=1000");
    INFO(gen_tf.output);
    REQUIRE(gen_tf.exit_code == 0);
    const std::string file = data + "/train/img_0_of_1.tfrecord";
    std::string bytes = ReadTextFile(file);
    REQUIRE(bytes.size() > 600);
    bytes[500] = static_cast<char>(bytes[500] ^ 0x40);
    WriteTextFile(file, bytes);
    auto r = Run("inspect " + file);
    INFO(r.output);
    CHECK(r.exit_code == 1);
    CHECK(r.output.find("\"crc_check\":{\"ok\":false") != std::string::npos);
    CHECK(r.output.find("dlio-run: problem: Corruption") != std::string::npos);
  }
  SECTION("an npy header nested 100,000 deep (it crashed with a stack overflow)") {
    const std::string script = R"(
import sys
body = "{'descr': '<f4', 'fortran_order': False, 'shape': " + '(' * 100000 + ')' * 100000 + '}'
body += ' ' * (-(12 + len(body) + 1) % 64) + '\n'
open(sys.argv[1] + '/deep.npy', 'wb').write(b'\x93NUMPY\x02\x00' + len(body).to_bytes(4, 'little') + body.encode())
)";
    REQUIRE(Python(dir, script).exit_code == 0);
    auto r = Run("inspect " + dir / "deep.npy");
    CHECK(r.exit_code == 1);
    CHECK(r.output.find("nesting deeper than 64 levels") != std::string::npos);
  }
  SECTION("a valid npy of shape (2^60, 0) (inspect hung)") {
    const std::string script = R"(
import sys
import numpy as np
from numpy.lib import format as npformat
with open(sys.argv[1] + '/huge.npy', 'wb') as f:
    npformat.write_array_header_1_0(f, {'descr': '<f4', 'fortran_order': False, 'shape': (2**60, 0)})
)";
    REQUIRE(Python(dir, script).exit_code == 0);
    auto r = Run("inspect " + dir / "huge.npy");
    CHECK(r.exit_code == 1);
    CHECK(r.output.find("1152921504606846976 samples of 0 bytes") != std::string::npos);
  }
  SECTION("a file that does not open") {
    auto r = Run("inspect " + dir / "missing.npz");
    CHECK(r.exit_code == 1);
    CHECK(r.output.find("dlio-run: error:") != std::string::npos);
    CHECK(r.output.find("missing.npz") != std::string::npos);
  }
}
