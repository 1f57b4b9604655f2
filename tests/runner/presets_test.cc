// Every built-in preset, and every upstream workload config (DLIO's and MLPerf Storage's, from
// the peers folder), loads in dlio, validates and names a format dlio has.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "dlio/config.h"
#include "dlio/registries.h"
#include "dlio/workloads.h"
#include "format/parquet/parquet_options.h"
#include "test_util.h"

namespace dlio {
namespace {

namespace fs = std::filesystem;

// Formats that live on another branch: a config naming one loads and validates, but dlio has
// no reader for it yet.
const std::set<std::string> kFormatsElsewhere = {"parquet"};

void CheckFormat(const Registries& registries, const WorkloadConfig& c) {
  INFO("format " << c.dataset.format);
  if (kFormatsElsewhere.count(c.dataset.format)) return;
  CHECK(registries.formats.Get(c.dataset.format).ok());
}

std::vector<fs::path> YamlFiles(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST_CASE("every preset is its file, parses, validates and names a real format") {
  Registries registries;
  REQUIRE(RegisterBuiltins(&registries).ok());
  const auto files = YamlFiles(fs::path(DLIO_SOURCE_DIR) / "libdlio" / "workloads");
  // Every file is embedded, beside dlio's own `default` (in the code).
  REQUIRE(files.size() + 1 == WorkloadPresets().size());
  for (const WorkloadPresetInfo& p : WorkloadPresets()) {
    INFO(p.name);
    CHECK_FALSE(p.description.empty());
    CHECK(p.description.size() < 200);
    if (p.name != "default") {
      CHECK(p.yaml.find("# source: ") != std::string::npos);
      const std::string path =
          std::string(DLIO_SOURCE_DIR) + "/libdlio/workloads/" + p.name + ".yaml";
      CHECK(p.yaml == testing::ReadTextFile(path));
    }
    std::vector<std::string> warnings;
    auto c = LoadWorkloadPreset(p.name, &warnings);
    REQUIRE(c.ok());
    const Status valid = c->Validate();
    INFO(valid.message());
    CHECK(valid.ok());
    CheckFormat(registries, *c);
  }
}

// The presets of DLIO's and MLPerf Storage v3.0's names (the parquet dlrm_* and flux_* configs
// of MLPerf Storage v3.0 come with the parquet format).
TEST_CASE("presets cover DLIO's workload configs and MLPerf Storage's by name") {
  std::set<std::string> names;
  for (const WorkloadPresetInfo& p : WorkloadPresets()) names.insert(p.name);
  for (const char* name : {"bert_v100",         "cosmoflow_a100",
                           "cosmoflow_h100",    "cosmoflow_v100",
                           "dlio_default",      "dlrm",
                           "llama_1t",          "llama_405b",
                           "llama_70b",         "llama_70b_zero3",
                           "llama_7b",          "llama_7b_zero3",
                           "llama_8b_zero3",    "megatron_deepspeed_LLNL",
                           "resnet50_a100",     "resnet50_h100",
                           "resnet50_tf",       "resnet50_v100",
                           "unet3d_a100",       "unet3d_a100_s3",
                           "unet3d_h100",       "unet3d_h100_s3",
                           "unet3d_v100",       "unet3d_v100_s3",
                           "cosmoflow_datagen", "resnet50_datagen",
                           "unet3d_datagen",    "llama3_8b",
                           "llama3_70b",        "llama3_405b",
                           "llama3_1t",         "unet3d_b200",
                           "retinanet_a100",    "retinanet_h100",
                           "retinanet_b200",    "retinanet_mi355",
                           "retinanet_datagen", "dlrm_b200",
                           "dlrm_mi355",        "dlrm_h100",
                           "dlrm_a100",         "flux_b200",
                           "flux_mi355",        "flux_h100",
                           "flux_a100"}) {
    INFO(name);
    CHECK(names.count(name) == 1);
  }
  auto retinanet = LoadWorkloadPreset("retinanet_b200");
  REQUIRE(retinanet.ok());
  CHECK(retinanet->dataset.format == "jpeg");
  CHECK(retinanet->dataset.num_files_train == 1170301);
  CHECK(retinanet->dataset.record_length_bytes == 322957);
  CHECK(retinanet->reader.batch_size == 24);
  CHECK(retinanet->train.computation_time.mean == Approx(0.04755));
  CHECK(retinanet->metric.au == Approx(0.85));
  auto dlrm = LoadWorkloadPreset("dlrm_mi355");
  REQUIRE(dlrm.ok());
  CHECK(dlrm->dataset.format == "parquet");
  CHECK(dlrm->dataset.num_samples_per_file == 4718592);
  const ParquetOptions dlrm_parquet = dlrm->dataset.formats.Value<ParquetOptions>();
  CHECK(dlrm_parquet.row_group_size == 6144);
  REQUIRE(dlrm_parquet.columns.size() == 200);
  CHECK(dlrm_parquet.columns[2].dtype == "float64");
  CHECK_FALSE(dlrm_parquet.columns[10].read);
  CHECK(dlrm_parquet.columns[11].read);  // feature_011, the first column read
  size_t read = 0;
  for (const ParquetColumnOptions& c : dlrm_parquet.columns) read += c.read ? 1 : 0;
  CHECK(read == 40);
  CHECK(dlrm->reader.batch_size == 18432);
  auto flux = LoadWorkloadPreset("flux_b200");
  REQUIRE(flux.ok());
  const ParquetOptions flux_parquet = flux->dataset.formats.Value<ParquetOptions>();
  REQUIRE(flux_parquet.columns.size() == 5);
  CHECK(flux_parquet.columns[0].size == 524328);
  CHECK(flux->dataset.record_length_bytes == 2164832);
  CHECK(flux->reader.batch_size == 64);
  CHECK(flux->metric.au == Approx(0.90));
  auto b200 = LoadWorkloadPreset("unet3d_b200");
  REQUIRE(b200.ok());
  CHECK(b200->dataset.num_files_train == 7200);
  CHECK(b200->train.computation_time.mean == Approx(0.162));
  auto megatron = LoadWorkloadPreset("megatron_deepspeed_LLNL");
  REQUIRE(megatron.ok());
  CHECK(megatron->dataset.num_samples_per_file == 277203535);
  CHECK(megatron->model.parallelism.pipeline == 8);
}

// The peers folder (../shared/peers beside the source tree, DLIO_PEERS_DIR): when it is
// missing the test is skipped with ctest's code 77.
fs::path Peers() { return dlio::testing::PeersDirOrSkip(DLIO_PEERS_DIR, "dlio_benchmark-e1919d7"); }

TEST_CASE("every upstream workload config loads in dlio and validates, shrunk") {
  Registries registries;
  REQUIRE(RegisterBuiltins(&registries).ok());
  const fs::path peers = Peers();
  std::vector<fs::path> files = YamlFiles(peers / "dlio_benchmark-e1919d7/configs/workload");
  CHECK(files.size() == 24);
  for (const auto& f : YamlFiles(peers / "mlcommons-storage-caa90c9/configs/dlio/workload")) {
    files.push_back(f);
  }
  CHECK(files.size() == 24 + 13);
  static const WorkloadConfig kBase;
  for (const fs::path& file : files) {
    INFO(file.string());
    std::vector<std::string> warnings;
    auto c = LoadConfigFile(file.string(), kBase, &warnings);
    REQUIRE(c.ok());
    // Shrunk as a test would run it: a few small files.
    for (const char* o : {"dataset.num_files_train=2", "dataset.num_samples_per_file=2",
                          "dataset.record_length_bytes_stdev=0"}) {
      REQUIRE(ApplyOverride(&*c, o).ok());
    }
    if (c->dataset.record_dims.empty())
      REQUIRE(ApplyOverride(&*c, "dataset.record_length=4096").ok());
    const Status valid = c->Validate();
    INFO(valid.message());
    CHECK(valid.ok());
    CheckFormat(registries, *c);
  }
}

}  // namespace
}  // namespace dlio
