// dlio_benchmark's Hydra command line: parsing, composition and Hydra's files (apps/dlio-run).
#include "hydra_cli.h"

#include <yaml-cpp/yaml.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "test_util.h"

namespace {

namespace fs = std::filesystem;
using dlio::testing::TempDir;
using dlio_run::ComposeHydraConfig;
using dlio_run::ConfigFromComposition;
using dlio_run::HydraCommandLine;
using dlio_run::ParseHydraCommandLine;

void Write(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << text;
}

HydraCommandLine Parse(const std::vector<std::string>& args) {
  auto cl = ParseHydraCommandLine(args);
  INFO(cl.status().ToString());
  REQUIRE(cl.ok());
  return *cl;
}

// A config dir as MLPerf Storage ships one: config.yaml with an empty workload default.
void MakeConfigDir(const TempDir& dir) {
  Write(dir / "c/config.yaml",
        "defaults:\n - _self_\n - workload: tiny\n - override hydra/job_logging: disabled\n"
        "hydra:\n  run:\n    dir: ./results/${workload.model.name}/x\n");
  Write(dir / "c/workload/tiny.yaml",
        "model:\n  name: tinynet\nframework: pytorch\nworkflow:\n  generate_data: True\n"
        "  train: False\ndataset:\n  data_folder: data/tiny\n  format: npz\n"
        "  num_files_train: 8\n  record_length_bytes: 1024\n  made_up_key: 3\n");
}

}  // namespace

TEST_CASE("dlio_benchmark parses mlpstorage's command line") {
  const auto cl =
      Parse({"workload=unet3d_h100", "++hydra.run.dir=/r/run", "++hydra.output_subdir=dlio_config",
             "++workload.dataset.num_files_train=4", "+workload.reader.batch_size=1",
             "workload.train.epochs=1", "hydra.job.chdir=False", "--config-dir=/s/configs/dlio"});
  CHECK(cl.workload == "unet3d_h100");
  CHECK(cl.config_dir == "/s/configs/dlio");
  REQUIRE(cl.run_dir);
  CHECK(*cl.run_dir == "/r/run");
  REQUIRE(cl.output_subdir);
  CHECK(*cl.output_subdir == "dlio_config");
  CHECK(cl.task_overrides ==
        std::vector<std::string>{"workload=unet3d_h100", "++workload.dataset.num_files_train=4",
                                 "+workload.reader.batch_size=1", "workload.train.epochs=1"});
  CHECK(cl.hydra_overrides == std::vector<std::string>{"++hydra.run.dir=/r/run",
                                                       "++hydra.output_subdir=dlio_config",
                                                       "hydra.job.chdir=False"});
  REQUIRE(cl.workload_sets.size() == 3);
  CHECK(cl.workload_sets[0] ==
        std::make_pair(std::string("dataset.num_files_train"), std::string("4")));
  CHECK(cl.workload_sets[2].first == "train.epochs");

  const auto spaced = Parse({"--config-dir", "d", "--config-name", "other", "-cn", "mine"});
  CHECK(spaced.config_dir == "d");
  CHECK(spaced.config_name == "mine");
}

TEST_CASE("dlio_benchmark refuses what Hydra would refuse, naming the argument") {
  for (const std::string bad :
       {"~workload.train", "dataset.num_files_train=4", "--multirun", "--config-dir", "stray"}) {
    auto cl = ParseHydraCommandLine({bad});
    INFO(bad);
    REQUIRE_FALSE(cl.ok());
    CHECK(cl.status().message().find(bad) != std::string::npos);
  }
}

TEST_CASE("dlio_benchmark composes as Hydra: defaults list, workload file, overrides, run dir") {
  TempDir dir;
  MakeConfigDir(dir);
  auto cl = Parse({"++workload.dataset.num_files_train=4", "++workload.reader.batch_size=2",
                   "--config-dir=" + dir / "c"});
  auto composed = ComposeHydraConfig(cl);
  INFO(composed.status().ToString());
  REQUIRE(composed.ok());
  CHECK(composed->workload_name == "tiny");  // from the defaults list
  CHECK(composed->run_dir == "./results/tinynet/x");
  CHECK(composed->output_subdir == ".hydra");
  CHECK(composed->workload["dataset"]["num_files_train"].as<int>() == 4);
  CHECK(composed->workload["reader"]["batch_size"].as<int>() == 2);  // a new section

  std::vector<std::string> warnings;
  auto config = ConfigFromComposition(*composed, &warnings);
  INFO(config.status().ToString());
  REQUIRE(config.ok());
  CHECK(config->name == "tiny");
  CHECK(config->dataset.num_files_train == 4);
  CHECK(config->output.folder == "./results/tinynet/x");
  // An unknown key: a warning naming it, as DLIO goes on (dlio-run refuses it).
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("workload.dataset.made_up_key") != std::string::npos);

  // workload=NAME without a file: dlio's built-in preset; an unknown one: NotFound naming it.
  auto preset = ComposeHydraConfig(
      Parse({"workload=default", "--config-dir=" + dir / "c", "++hydra.run.dir=out/${now:%Y}"}));
  REQUIRE(preset.ok());
  CHECK(preset->source == "built-in preset 'default'");
  auto preset_config = ConfigFromComposition(*preset, nullptr);
  REQUIRE(preset_config.ok());
  CHECK(preset_config->output.folder == preset->run_dir);  // not the preset's ./output/default
  CHECK(preset->run_dir.size() == std::string("out/2026").size());
  // MLPerf Storage v3.0's parquet presets by their names, overrides applied on top.
  auto flux = ComposeHydraConfig(Parse(
      {"workload=flux_mi355", "--config-dir=" + dir / "c", "++workload.reader.batch_size=4"}));
  REQUIRE(flux.ok());
  auto flux_config = ConfigFromComposition(*flux, nullptr);
  REQUIRE(flux_config.ok());
  CHECK(flux_config->dataset.format == "parquet");
  CHECK(flux_config->dataset.num_samples_per_file == 288);
  CHECK(flux_config->reader.batch_size == 4);
  auto missing = ComposeHydraConfig(Parse({"workload=nope", "--config-dir=" + dir / "c"}));
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message().find("'nope'") != std::string::npos);
}

TEST_CASE("dlio_benchmark writes Hydra's config.yaml, hydra.yaml and overrides.yaml") {
  TempDir dir;
  MakeConfigDir(dir);
  const auto cl = Parse({"workload=tiny", "++workload.dataset.num_files_train=4",
                         "++hydra.run.dir=" + dir / "run", "++hydra.output_subdir=dlio_config",
                         "--config-dir=" + dir / "c"});
  auto composed = ComposeHydraConfig(cl);
  REQUIRE(composed.ok());
  REQUIRE(dlio_run::WriteHydraFiles(cl, *composed).ok());
  const YAML::Node config = YAML::LoadFile(dir / "run/dlio_config/config.yaml");
  CHECK(config["workload"]["dataset"]["num_files_train"].as<int>() == 4);
  CHECK(config["workload"]["model"]["name"].as<std::string>() == "tinynet");
  CHECK(config["workload"]["dataset"]["made_up_key"]);  // as given: Hydra keeps every key
  CHECK(config["workload"]["workflow"]["generate_data"].as<bool>());
  const YAML::Node overrides = YAML::LoadFile(dir / "run/dlio_config/overrides.yaml");
  REQUIRE(overrides.IsSequence());
  CHECK(overrides.as<std::vector<std::string>>() ==
        std::vector<std::string>{"workload=tiny", "++workload.dataset.num_files_train=4"});
  const YAML::Node hydra = YAML::LoadFile(dir / "run/dlio_config/hydra.yaml")["hydra"];
  CHECK(hydra["run"]["dir"].as<std::string>() == dir / "run");
  CHECK(hydra["output_subdir"].as<std::string>() == "dlio_config");
  CHECK(hydra["overrides"]["task"].size() == 2);
  CHECK(hydra["runtime"]["choices"]["workload"].as<std::string>() == "tiny");

  // hydra.output_subdir=null: Hydra writes none of them.
  const auto none = Parse({"workload=tiny", "++hydra.run.dir=" + dir / "run2",
                           "hydra.output_subdir=null", "--config-dir=" + dir / "c"});
  auto composed_none = ComposeHydraConfig(none);
  REQUIRE(composed_none.ok());
  REQUIRE(dlio_run::WriteHydraFiles(none, *composed_none).ok());
  CHECK_FALSE(fs::exists(dir / "run2"));
}
