// The built-in presets: each is the DLIO YAML file of libdlio/workloads/ byte for byte, parses with
// no DLIO key left unhonoured (beyond the two DLIO ignores too), validates, and carries the
// numbers of WORKLOADS.md §3.
#include "dlio/workloads.h"

#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "checkpoint/model_checkpoint_options.h"
#include "dlio/config.h"
#include "dlio/loop.h"
#include "dlio/registries.h"
#include "test_util.h"

namespace dlio {
namespace {

const std::vector<std::string> kDlioPresets = {
    "unet3d_a100",    "unet3d_h100",    "unet3d_v100", "resnet50_a100", "resnet50_h100",
    "cosmoflow_a100", "cosmoflow_h100", "bert_v100",   "dlrm",          "llama3_8b",
    "llama3_70b",     "llama3_405b",    "llama3_1t"};

const WorkloadPresetInfo* Find(const std::string& name) {
  for (const auto& p : WorkloadPresets()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

TEST_CASE("every DLIO preset is its YAML file, parses, validates and names no unused key") {
  // Keys the files carry that DLIO itself ignores or that have no I/O effect here.
  const std::set<std::string> accepted_unused = {"reader.dont_use_mmap", "workflow.debug"};
  for (const auto& name : kDlioPresets) {
    INFO(name);
    const WorkloadPresetInfo* p = Find(name);
    REQUIRE(p != nullptr);
    CHECK_FALSE(p->description.empty());
    CHECK(p->description.size() < 200);
    const std::string path = std::string(DLIO_SOURCE_DIR) + "/libdlio/workloads/" + name + ".yaml";
    CHECK(p->yaml == testing::ReadTextFile(path));
    CHECK(p->yaml.find("# source: ") != std::string::npos);  // where the numbers came from

    std::vector<std::string> warnings;
    auto c = LoadWorkloadPreset(name, &warnings);
    REQUIRE(c.ok());
    CHECK(c->name == name);
    CHECK(c->Validate().ok());
    for (const auto& w : warnings) {
      INFO(w);
      bool allowed = false;
      for (const auto& key : accepted_unused)
        allowed |= w.find("'" + key + "'") != std::string::npos;
      CHECK(allowed);
    }
    // The same text through the file loader gives the same config (bar the run name).
    auto from_file = LoadConfigFile(path);
    REQUIRE(from_file.ok());
    CHECK(from_file->name == name);
    CHECK(ConfigToJson(*from_file) == ConfigToJson(*c));
  }
  auto missing = LoadWorkloadPreset("unet3d_z900");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().message().find("llama3_8b") != std::string::npos);
}

TEST_CASE("training presets carry WORKLOADS.md's numbers") {
  struct Expect {
    const char* name;
    const char* format;
    uint64_t files, samples, record, stdev, batch, threads;
    double compute, au;
    uint64_t epochs;
  };
  const Expect table[] = {
      {"unet3d_a100", "npz", 168, 1, 146600628, 68341808, 7, 4, 0.636, 0.90, 5},
      {"unet3d_h100", "npz", 168, 1, 146600628, 68341808, 7, 4, 0.323, 0.90, 5},
      {"unet3d_v100", "npz", 168, 1, 146600628, 68341808, 4, 4, 1.3604, 0.90, 5},
      {"resnet50_a100", "tfrecord", 1024, 1251, 114660, 0, 400, 8, 0.435, 0.90, 5},
      {"resnet50_h100", "tfrecord", 1024, 1251, 114660, 0, 400, 8, 0.224, 0.90, 5},
      {"cosmoflow_a100", "tfrecord", 524288, 1, 2828486, 71311, 1, 4, 0.00551, 0.70, 5},
      {"cosmoflow_h100", "tfrecord", 524288, 1, 2828486, 71311, 1, 4, 0.00350, 0.70, 5},
      {"bert_v100", "tfrecord", 500, 313532, 2500, 0, 48, 1, 0.968, 0.90, 1},
      {"dlrm", "indexed_binary", 1, 1024, 671088640, 0, 1, 1, 0.064296, 0.90, 1},
  };
  for (const auto& e : table) {
    INFO(e.name);
    auto c = LoadWorkloadPreset(e.name);
    REQUIRE(c.ok());
    CHECK(c->workflow.train);
    CHECK_FALSE(c->workflow.generate_data);  // DLIO's files expect a generated dataset
    CHECK(c->dataset.format == e.format);
    CHECK(c->dataset.num_files_train == e.files);
    CHECK(c->dataset.num_samples_per_file == e.samples);
    CHECK(c->dataset.record_length_bytes == e.record);
    CHECK(c->dataset.record_length_bytes_stdev == e.stdev);
    CHECK(c->reader.batch_size == e.batch);
    CHECK(c->reader.read_threads == e.threads);
    CHECK(c->train.computation_time.mean == Approx(e.compute));
    CHECK(c->metric.au == Approx(e.au));
    CHECK(c->train.epochs == e.epochs);
  }
  auto unet = LoadWorkloadPreset("unet3d_a100");
  REQUIRE(unet.ok());
  CHECK(unet->reader.file_shuffle == ShuffleMode::kSeed);
  CHECK(unet->reader.sample_shuffle == ShuffleMode::kSeed);
  CHECK(unet->workflow.checkpoint);
  CHECK(unet->checkpoint.checkpoint_after_epoch == 5);
  CHECK(unet->checkpoint.epochs_between_checkpoints == 2);
  CHECK(unet->checkpoint.model_size_bytes == 499153191);
  auto cosmo = LoadWorkloadPreset("cosmoflow_h100");
  REQUIRE(cosmo.ok());
  CHECK(cosmo->reader.shuffle_size == 2);
  auto bert = LoadWorkloadPreset("bert_v100");
  REQUIRE(bert.ok());
  CHECK(bert->train.total_training_steps == 1000);
  CHECK(bert->checkpoint.steps_between_checkpoints == 250);
  CHECK(bert->checkpoint.model_size_bytes == 4034713312ull);
  CHECK(bert->reader.transfer_size == 262144);
  CHECK(bert->dataset.file_prefix == "part");
  auto dlrm = LoadWorkloadPreset("dlrm");
  REQUIRE(dlrm.ok());
  CHECK(dlrm->reader.sample_shuffle == ShuffleMode::kRandom);
}

TEST_CASE("llama3 presets are checkpoint-only transformer workloads") {
  struct Expect {
    const char* name;
    int64_t layers;
    uint64_t hidden, ffn, heads, kv, tensor, pipeline, zero;
  };
  const Expect table[] = {
      {"llama3_8b", 32, 4096, 14336, 32, 8, 1, 1, 3},
      {"llama3_70b", 80, 8192, 28672, 128, 8, 8, 1, 3},
      {"llama3_405b", 126, 16384, 53248, 128, 8, 8, 32, 1},
      {"llama3_1t", 128, 25872, 98304, 192, 32, 8, 64, 1},
  };
  for (const auto& e : table) {
    INFO(e.name);
    auto c = LoadWorkloadPreset(e.name);
    REQUIRE(c.ok());
    CHECK_FALSE(c->workflow.train);
    CHECK(c->workflow.checkpoint);
    CHECK(c->checkpoint.num_checkpoints_write == 10);
    CHECK(c->checkpoint.num_checkpoints_read == 10);
    CHECK(c->checkpoint.fsync);
    CHECK(c->checkpoint.time_between_checkpoints == 5);
    CHECK(c->checkpoint.type == "auto");  // resolves to dlio_benchmark (framework pytorch)
    CHECK(c->model.type == "transformer");
    CHECK(c->model.num_layers == e.layers);
    CHECK(c->model.transformer.vocab_size == 128256);
    CHECK(c->model.transformer.hidden_size == e.hidden);
    CHECK(c->model.transformer.ffn_hidden_size == e.ffn);
    CHECK(c->model.transformer.num_attention_heads == e.heads);
    CHECK(c->model.transformer.num_kv_heads == e.kv);
    CHECK(c->model.parallelism.tensor == e.tensor);
    CHECK(c->model.parallelism.pipeline == e.pipeline);
    CHECK(c->model.parallelism.zero_stage == e.zero);
    CHECK(c->model.model_datatype == Datatype::kFp16);
    CHECK(c->model.optimizer_datatype == Datatype::kFp32);
  }
}

TEST_CASE("the DLIO paper's eight scientific presets carry WORKLOADS.md section 1's numbers") {
  struct Expect {
    const char* name;
    const char* format;
    uint64_t files, samples, record, batch, threads;
    int64_t steps;
    uint64_t epochs;
    const char* pipeline;
  };
  const Expect table[] = {
      {"cosmic_tagger", "hdf5", 1, 43000, 40960, 32, 1, 150, 1, "sync"},
      {"dffn", "hdf5", 1, 18678, 131072, 32, 1, 400, 1, "sync"},
      {"cosmoflow", "tfrecord", 1024, 1, 16777216, 1, 4, -1, 4, "threaded"},
      {"candle", "csv", 1, 1120, 262144, 20, 1, -1, 60, "preload"},
      {"frnn", "npz", 2800, 1024, 2048, 1024, 4, -1, 1, "sync"},
      {"imagenet", "tfrecord", 1024, 1024, 262144, 32, 2, 110, 1, "threaded"},
      {"climate_seg", "synthetic", 1, 1200, 56623104, 1, 1, 1200, 1, "threaded"},
      {"l2hmc", "synthetic", 1, 4800, 4096, 32, 1, 150, 1, "threaded"},
  };
  Registries builtins;
  REQUIRE(RegisterBuiltins(&builtins).ok());
  for (const auto& e : table) {
    INFO(e.name);
    const WorkloadPresetInfo* p = Find(e.name);
    REQUIRE(p != nullptr);
    CHECK(p->description.rfind("DLIO paper: ", 0) == 0);
    CHECK(p->description.size() < 200);
    const std::string path =
        std::string(DLIO_SOURCE_DIR) + "/libdlio/workloads/" + e.name + ".yaml";
    CHECK(p->yaml == testing::ReadTextFile(path));
    std::vector<std::string> warnings;
    auto c = LoadWorkloadPreset(e.name, &warnings);
    REQUIRE(c.ok());
    CHECK(warnings.empty());  // every key honoured
    CHECK(c->Validate().ok());
    CHECK(c->workflow.generate_data);  // runnable as is: generates its own (scaled) dataset
    CHECK(c->dataset.format == e.format);
    CHECK(c->dataset.num_files_train == e.files);
    CHECK(c->dataset.num_samples_per_file == e.samples);
    CHECK(c->dataset.record_length_bytes == e.record);
    CHECK(c->reader.batch_size == e.batch);
    CHECK(c->reader.read_threads == e.threads);
    CHECK(c->train.total_training_steps == e.steps);
    CHECK(c->train.epochs == e.epochs);
    CHECK(PipelineNameFor(*c, /*storage_needs_mpi=*/false,
                          PipelineCapabilitiesFor(*c, builtins.pipelines)) == e.pipeline);
    CHECK(c->scale < 1);  // a default that runs in seconds; scale=1 is the paper's run
    auto scaled = ScaleConfig(*c);
    REQUIRE(scaled.ok());
    CHECK(scaled->dataset.record_length_bytes == e.record);  // sizes never scale
    CHECK(scaled->reader.batch_size == e.batch);
  }
  auto ct = LoadWorkloadPreset("cosmic_tagger");
  REQUIRE(ct.ok());
  CHECK(ct->dataset.record_length_bytes_stdev == 10240);
  CHECK(ct->dataset.chunk_size == 2048);
  CHECK(ct->checkpoint.steps_between_checkpoints == 50);
  CHECK(ct->workflow.checkpoint);
  auto dffn = LoadWorkloadPreset("dffn");
  REQUIRE(dffn.ok());
  CHECK(dffn->dataset.metadata_file);
  CHECK(dffn->dataset.chunk_size == 65536);
  CHECK(dffn->reader.read_fraction == Approx(1.0 / 3).epsilon(0.001));
  auto cosmo = LoadWorkloadPreset("cosmoflow");
  REQUIRE(cosmo.ok());
  CHECK(cosmo->reader.computation_threads == 8);
  CHECK(cosmo->reader.transfer_size == 262144);
  auto candle = LoadWorkloadPreset("candle");
  REQUIRE(candle.ok());
  CHECK(candle->reader.sharding == Sharding::kNone);
  auto frnn = LoadWorkloadPreset("frnn");
  REQUIRE(frnn.ok());
  CHECK(frnn->side_io.read_size == 100);
  CHECK(frnn->side_io.schedule == SideIoSchedule::kPerStep);
  auto imagenet = LoadWorkloadPreset("imagenet");
  REQUIRE(imagenet.ok());
  CHECK(imagenet->reader.computation_threads == 4);
  CHECK(imagenet->reader.file_shuffle == ShuffleMode::kSeed);
  CHECK(imagenet->reader.sample_shuffle == ShuffleMode::kOff);
  CHECK(imagenet->train.excluded_start_steps == 10);
  auto climate = LoadWorkloadPreset("climate_seg");
  REQUIRE(climate.ok());
  CHECK(climate->side_io.reads == 50);
  CHECK(climate->side_io.read_size == 500);
  CHECK(climate->side_io.schedule == SideIoSchedule::kSpread);
  CHECK(climate->side_io.write_bytes == 4u << 20);
  auto l2hmc = LoadWorkloadPreset("l2hmc");
  REQUIRE(l2hmc.ok());
  CHECK(l2hmc->checkpoint.rank_mode == CheckpointRankMode::kRoot);
  CHECK(l2hmc->checkpoint.checkpointers.Value<ModelCheckpointOptions>().model_files == 4);
  CHECK(l2hmc->checkpoint.storage_type == "stdio");
  CHECK(l2hmc->checkpoint.steps_between_checkpoints == 50);
}

}  // namespace
}  // namespace dlio
