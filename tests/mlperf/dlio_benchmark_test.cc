// The dlio_benchmark binary (DLIO's Hydra command line over dlio-run's run code): DLIO's output
// layout, summary.json keys and units, unknown keys, and exit codes shared with dlio-run.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "test_util.h"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using dlio::testing::ReadTextFile;
using dlio::testing::RunCommand;
using dlio::testing::TempDir;

std::string Bin(const char* name) {
  return std::string(DLIO_BINARY_DIR) + "/apps/dlio-run/" + name;
}

void Write(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << text;
}

// A Hydra config dir as MLPerf Storage ships one, with a tiny workload (and a key dlio lacks).
void MakeConfigDir(const TempDir& dir, bool train) {
  Write(dir / "c/config.yaml", "defaults:\n - _self_\n - workload: tiny\n");
  Write(
      dir / "c/workload/tiny.yaml",
      std::string("model:\n  name: tinynet\nframework: pytorch\nworkflow:\n  generate_data: True\n"
                  "  train: ") +
          (train ? "True" : "False") + "\ndataset:\n  data_folder: " + dir / "data" +
          "\n  format: npz\n  num_files_train: 4\n  num_samples_per_file: 1\n"
          "  record_length_bytes: 4096\n  made_up_key: 3\nreader:\n  data_loader: pytorch\n"
          "  batch_size: 1\n  read_threads: 1\ntrain:\n  epochs: 1\n  computation_time: 0\n");
}

std::string HydraArgs(const TempDir& dir) {
  return " ++hydra.run.dir=" + dir / "run" +
         " ++hydra.output_subdir=dlio_config --config-dir=" + dir / "c";
}

json LoadJson(const std::string& path) { return json::parse(ReadTextFile(path)); }

}  // namespace

TEST_CASE("dlio_benchmark runs a Hydra config dir's workload into DLIO's run layout") {
  TempDir dir;
  MakeConfigDir(dir, /*train=*/true);
  auto r =
      RunCommand(Bin("dlio_benchmark") + " ++workload.dataset.num_files_train=2" + HydraArgs(dir));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  // DLIO goes on past a key it does not know; so does dlio_benchmark, saying so.
  CHECK(r.output.find("unknown key 'workload.dataset.made_up_key'") != std::string::npos);
  for (const char* f : {"summary.json", "dlio.log", "dlio_config/config.yaml",
                        "dlio_config/hydra.yaml", "dlio_config/overrides.yaml"}) {
    CHECK(fs::exists(dir / ("run/" + std::string(f))));
  }
  const json s = LoadJson(dir / "run/summary.json");
  CHECK(s["num_files_train"] == 2);  // the override
  CHECK(s["num_files_eval"] == 0);
  // DLIO's per-host lists (GB = 2^30 bytes) and rank 0's host files.
  REQUIRE(s["host_memory_GB"].is_array());
  REQUIRE(s["host_memory_GB"].size() == 1);
  CHECK(s["host_memory_GB"][0].get<double>() > 0.1);
  REQUIRE(s["host_cpu_count"].size() == 1);
  CHECK(s["host_cpu_count"][0].get<int>() >= 1);
  CHECK(s["potential_caching"] == json::array({1}));
  CHECK(s["data_size_per_host_GB"].get<double>() == Approx(2.0 * 4096 / (1 << 30)));
  CHECK(s["host_meminfo"].contains("MemTotal"));
  CHECK(s["host_cpuinfo"].is_object());
  CHECK(s.contains("host_processor_name"));
  // DLIO's MB is 2^20 bytes; dlio's 10^6-byte figures say SI in their name.
  const json& m = s["metric"];
  const double mib = m["train_io_mean_MB_per_second"].get<double>();
  CHECK(mib > 0);
  CHECK(mib == Approx(m["train_io_mean_MiB_per_second"].get<double>()));
  CHECK(m["train_io_mean_SI_MB_per_second"].get<double>() == Approx(mib * 1024 * 1024 / 1e6));
}

TEST_CASE("dlio_benchmark writes no summary.json for data generation, as DLIO") {
  TempDir dir;
  MakeConfigDir(dir, /*train=*/false);
  auto r = RunCommand(Bin("dlio_benchmark") + HydraArgs(dir));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(fs::exists(dir / "run/dlio_config/config.yaml"));
  CHECK_FALSE(fs::exists(dir / "run/summary.json"));
  int npz = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir / "data"))
    npz += e.path().extension() == ".npz";
  CHECK(npz == 4);
}

TEST_CASE("an unknown key: dlio_benchmark warns and goes on, dlio-run refuses it (exit 2)") {
  TempDir dir;
  MakeConfigDir(dir, /*train=*/false);
  auto r = RunCommand(Bin("dlio-run") + " --config " + dir / "c/workload/tiny.yaml" + " -o " +
                      dir / "out");
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("made_up_key") != std::string::npos);
  auto bad = RunCommand(Bin("dlio_benchmark") + " --multirun");
  CHECK(bad.exit_code == 2);
  CHECK(bad.output.find("dlio_benchmark: error: ") != std::string::npos);
}

TEST_CASE("config refusals found before the run exit 2 in both programs") {
  TempDir dir;
  // 1 rank is not a multiple of tensor x pipeline = 3; an unknown storage (data, checkpoint).
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"model.parallelism.tensor=3", "not a multiple of model.parallelism.tensor"},
      {"storage.storage_type=nope", "storage.storage_type: unknown storage 'nope'"},
      {"checkpoint.storage_type=nope", "checkpoint.storage_type: unknown storage 'nope'"}};
  for (const auto& [set, message] : cases) {
    const std::string small = " ++workload.checkpoint.size_divisor=1000000 ++workload." + set;
    auto run =
        RunCommand(Bin("dlio-run") + " --quiet --workload llama3_8b -o " + dir / "o" + small);
    INFO(set << "\n" << run.output);
    CHECK(run.exit_code == 2);
    CHECK(run.output.find(message) != std::string::npos);
    auto bench = RunCommand(Bin("dlio_benchmark") +
                            " workload=llama3_8b ++hydra.run.dir=" + dir / "h" + small);
    INFO(bench.output);
    CHECK(bench.exit_code == 2);
    CHECK(bench.output.find(message) != std::string::npos);
  }
}

TEST_CASE("dlio_benchmark's summary.json has DLIO's eval_* keys, MB = 2^20 bytes") {
  TempDir dir;
  auto r = RunCommand(Bin("dlio_benchmark") + " workload=default ++hydra.run.dir=" + dir / "run" +
                      " ++workload.dataset.data_folder=" + dir / "data" +
                      " ++workload.dataset.num_files_train=2 ++workload.dataset.num_files_eval=2"
                      " ++workload.dataset.record_length_bytes=4096 ++workload.train.epochs=1"
                      " ++workload.workflow.evaluation=True ++workload.evaluation.eval_time=0"
                      " ++workload.train.computation_time=0 ++workload.workflow.checkpoint=False");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const json s = LoadJson(dir / "run/summary.json");  // not the preset's ./output/default
  CHECK(s["num_files_eval"] == 2);
  const json& m = s["metric"];
  for (const char* key :
       {"eval_au_percentage", "eval_au_mean_percentage", "eval_au_stdev_percentage",
        "eval_au_meet_expectation", "eval_throughput_samples_per_second",
        "eval_throughput_mean_samples_per_second", "eval_throughput_stdev_samples_per_second",
        "eval_io_mean_MB_per_second", "eval_io_stdev_MB_per_second"}) {
    CHECK(m.contains(key));
  }
  // Every eval sample is 4096 bytes: MiB/s = samples/s x 4096 / 2^20.
  CHECK(m["eval_io_mean_MB_per_second"].get<double>() ==
        Approx(m["eval_throughput_mean_samples_per_second"].get<double>() * 4096 / (1 << 20)));
}
