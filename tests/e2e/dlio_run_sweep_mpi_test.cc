// `dlio-run sweep` under mpiexec -n 2: every rank takes part in every point (per-rank files in
// each point's folder, the summary over 2 ranks), rank 0 alone writes the tables and prints, and a
// point that fails its preflight is recorded on both ranks alike (the search stops, no hang).
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_util.h"

namespace fs = std::filesystem;
using dlio::testing::CommandResult;
using dlio::testing::ReadTextFile;
using dlio::testing::RunCommand;
using dlio::testing::TempDir;
using json = nlohmann::json;

namespace {

// `timeout` guards against a hang of the job (exit code 124); ctest's TIMEOUT is the backstop.
CommandResult MpiSweep(const std::string& args) {
  return RunCommand("timeout 90 " + std::string(DLIO_MPIEXEC) + " -n 2 " + DLIO_BINARY_DIR +
                    "/apps/dlio-run/dlio-run sweep " + args + " 2>&1");
}

// 6 files x 2 samples x 16 KiB, 2 epochs; generated once (split over the ranks) and kept.
std::string TinyArgs(const TempDir& dir) {
  return " --quiet --generate --set dataset.data_folder=" + dir / "data" + " -o " + dir / "out" +
         " --set dataset.num_files_train=6 --set dataset.num_samples_per_file=2"
         " --set dataset.record_length_bytes=16384 --set dataset.keep_files=true"
         " --set train.epochs=2 --set train.computation_time=0.0005";
}

}  // namespace

TEST_CASE("mpiexec -n 2 sweep: every rank runs every point - rank 0 tabulates") {
  TempDir dir;
  auto r = MpiSweep(TinyArgs(dir) + " --vary reader.read_threads=1,2 --vary reader.batch_size=1,2");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  // Rank 0 alone prints the table.
  const size_t outputs = r.output.find("outputs: ");
  CHECK(outputs != std::string::npos);
  CHECK(r.output.find("outputs: ", outputs + 1) == std::string::npos);
  const json sweep = json::parse(ReadTextFile(dir / "out/sweep.json"));
  REQUIRE(sweep["points"].size() == 4);
  for (const json& p : sweep["points"]) {
    const std::string folder = p["output_folder"].get<std::string>();
    CHECK(p["status"] == "ok");
    CHECK(p["num_accelerators"] == 2);
    CHECK(fs::exists(folder + "/0_output.json"));
    CHECK(fs::exists(folder + "/1_output.json"));
    const json summary = json::parse(ReadTextFile(folder + "/summary.json"));
    CHECK(summary["ranks"].size() == 2);
    // 12 samples over 2 ranks: each rank reads 6 in each epoch, whatever the batch.
    CHECK(summary["ranks"][0]["samples"] == json::array({6, 6}));
    CHECK(summary["ranks"][1]["samples"] == json::array({6, 6}));
    CHECK(p["au_percent"].get<double>() ==
          Approx(summary["metric"]["train_au_mean_percentage"].get<double>()));
  }
}

TEST_CASE("mpiexec -n 2 sweep --until-au-below: a point failing its preflight stops both ranks") {
  TempDir dir;
  // 12 samples over 2 ranks: batch 8 leaves an epoch without a step on each rank.
  auto r = MpiSweep(TinyArgs(dir) + " --vary reader.batch_size=1,8,2 --until-au-below 0");
  INFO(r.output);
  CHECK(r.exit_code == 1);
  const json sweep = json::parse(ReadTextFile(dir / "out/sweep.json"));
  REQUIRE(sweep["points"].size() == 3);
  CHECK(sweep["points"][2]["status"] == "error");
  CHECK(sweep["search"]["best"] == 2);
  CHECK(sweep["search"]["lines"][0]["stopped_at"] == 8);
}
