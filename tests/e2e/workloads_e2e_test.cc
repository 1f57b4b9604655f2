// End-to-end: today's DLIO workloads through the dlio-run binary, scaled down with DLIO-style
// overrides (tiny files, one epoch, no compute), by preset name and from the unchanged YAML files;
// the llama3 checkpoint-only workload scaled with checkpoint.size_divisor.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dlio/registries.h"
#include "dlio/workloads.h"
#include "test_util.h"

namespace fs = std::filesystem;
using dlio::testing::CommandResult;
using dlio::testing::ReadTextFile;
using dlio::testing::RunCommand;
using dlio::testing::TempDir;
using json = nlohmann::json;

namespace {

using dlio::testing::DlioRun;
std::string PresetFile(const std::string& name) {
  return std::string(DLIO_SOURCE_DIR) + "/libdlio/workloads/" + name + ".yaml";
}

json LoadJson(const std::string& path) { return json::parse(ReadTextFile(path)); }

// Whether this build registers `format` (tfrecord arrives with another branch): checked in the
// Format registry, so the guarded tests start running as soon as it is registered.
bool FormatRegistered(const std::string& format) {
  dlio::Registries registries;
  REQUIRE(dlio::RegisterBuiltins(&registries).ok());
  return registries.formats.Contains(format);
}

// Scales a training workload down: 4 files x 2 samples of 4 KiB, batch 2, one epoch, no compute,
// everything inside `dir`; DLIO's Hydra override syntax, as a user would type it.
std::string TinyOverrides(const TempDir& dir, const std::string& tag) {
  return " --quiet --generate ++workload.dataset.data_folder=" + dir / ("data-" + tag) +
         " ++workload.output.folder=" + dir / ("out-" + tag) +
         " ++workload.checkpoint.checkpoint_folder=" + dir / ("ckpt-" + tag) +
         " ++workload.dataset.num_files_train=4 ++workload.dataset.num_samples_per_file=2"
         " ++workload.dataset.record_length_bytes=4096"
         " ++workload.dataset.record_length_bytes_stdev=0 ++workload.reader.batch_size=2"
         " ++workload.train.epochs=1 ++workload.train.computation_time=0";
}

const char* const kTrainingPresets[] = {"unet3d_a100",    "unet3d_h100",   "unet3d_v100",
                                        "resnet50_a100",  "resnet50_h100", "cosmoflow_a100",
                                        "cosmoflow_h100", "bert_v100",     "dlrm"};

}  // namespace

TEST_CASE("every training preset runs scaled down, by name and from its unchanged YAML file") {
  int ran = 0;
  for (const char* name : kTrainingPresets) {
    INFO(name);
    auto preset = dlio::LoadWorkloadPreset(name);
    REQUIRE(preset.ok());
    if (!FormatRegistered(preset->dataset.format)) {
      WARN(std::string("skipped ") + name + ": format '" + preset->dataset.format +
           "' is not registered in this build (the test runs once it is)");
      continue;
    }
    TempDir dir;
    const CommandResult by_name =
        RunCommand(DlioRun() + " --workload " + name + TinyOverrides(dir, "name"));
    INFO(by_name.output);
    REQUIRE(by_name.exit_code == 0);
    const CommandResult by_file =
        RunCommand(DlioRun() + " --config " + PresetFile(name) + TinyOverrides(dir, "file"));
    INFO(by_file.output);
    REQUIRE(by_file.exit_code == 0);
    CHECK(by_name.output.find("train_au_meet_expectation: ") != std::string::npos);

    for (const char* tag : {"name", "file"}) {
      const fs::path out = dir / (std::string("out-") + tag);
      const json s = LoadJson(out / "summary.json");
      CHECK(s["workload"] == name);
      CHECK(s["epochs"] == 1);
      CHECK(s["metric"]["train_au_percentage"].size() == 1);
      // 8 samples of 4 KiB, all read (batch 2 divides 8).
      CHECK(s["io"]["read_bytes"].get<uint64_t>() >= 8ull * 4096);
      CHECK(s["generate"]["files_written"] == 4 + preset->dataset.num_files_eval);  // dlrm: 1
      // The MLPerf Storage checks: a 32 KiB dataset is under 5x any host's memory. DLIO's
      // potential_caching, one entry per host: 1 = the host's memory holds its share.
      CHECK(s["potential_caching"] == json::array({1}));
      CHECK(s["storage_rules"]["dataset_ge_5x_client_memory"] == false);
      CHECK(s["storage_rules"]["dataset_bytes"] == 8 * 4096);
      CHECK(s["storage_rules"]["client_memory_bytes"].get<uint64_t>() > 0);
      const bool mlperf = std::string(name).rfind("unet3d", 0) == 0 ||
                          std::string(name).rfind("resnet50", 0) == 0 ||
                          std::string(name).rfind("cosmoflow", 0) == 0;
      CHECK(s["storage_rules"]["mlperf_rules"] == mlperf);
      CHECK(s["storage_rules"]["steps_per_epoch"] == 4);  // 8 samples / batch 2 / 1 rank
      bool steps_warning = false, memory_warning = false;
      for (const auto& w : s["warnings"]) {
        steps_warning |= w.get<std::string>().find("fewer than the 500") != std::string::npos;
        memory_warning |= w.get<std::string>().find("smaller than 5x") != std::string::npos;
      }
      CHECK(steps_warning == mlperf);
      CHECK(memory_warning);
    }
    // Preset and file are the same workload: identical effective configs apart from folders.
    std::string a = ReadTextFile(dir / "out-name/config.json");
    std::string b = ReadTextFile(dir / "out-file/config.json");
    for (std::string* text : {&a, &b}) {
      for (const char* tag : {"-name", "-file"}) {
        for (size_t at; (at = text->find(tag)) != std::string::npos;) text->replace(at, 5, "");
      }
    }
    CHECK(a == b);
    ++ran;
  }
  CHECK(ran >= 4);  // unet3d x 3 and dlrm need only built-in formats
}

TEST_CASE("llama3_8b runs checkpoint-only, scaled by checkpoint.size_divisor") {
  TempDir dir;
  // 1 rank: tensor 1 x pipeline 1 x data 1, ZeRO-3 -> the whole model on the rank:
  // model 8,030,261,248 x 2 = 16,060,522,496 bytes -> 16,061 at 1/10^6;
  // optimizer 3 x (8,030,261,248 + 5 x 4096) x 4 = 96,363,380,736 -> 96,364.
  const std::string common = DlioRun() + " --workload llama3_8b --quiet --trace" +
                             " ++workload.checkpoint.checkpoint_folder=" + dir / "ckpt" +
                             " ++workload.checkpoint.size_divisor=1000000" +
                             " ++workload.checkpoint.time_between_checkpoints=0";
  auto r = RunCommand(common + " ++workload.output.folder=" + dir / "out" +
                      " ++workload.checkpoint.num_checkpoints_write=3"
                      " ++workload.checkpoint.num_checkpoints_read=2");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  // framework pytorch: DLIO's layout, global_epoch1_step<k> for the k-th save and no manifests.
  CHECK(r.output.find("checkpoint only (dlio_benchmark checkpointer)") != std::string::npos);
  int files = 0;
  for (int step = 1; step <= 3; ++step) {
    const fs::path ck = dir / ("ckpt/global_epoch1_step" + std::to_string(step));
    CHECK(fs::file_size(ck / "zero_pp_rank_0_mp_rank_0_model_states.pt") == 16061);
    CHECK(fs::file_size(ck / "zero_pp_rank_0_mp_rank_0_optim_states.pt") == 96364);
  }
  for (const auto& e : fs::recursive_directory_iterator(dir / "ckpt")) {
    if (!e.is_regular_file()) continue;
    ++files;
    CHECK(e.path().extension() == ".pt");
  }
  CHECK(files == 6);

  const json s = LoadJson(dir / "out/summary.json");
  const json& m = s["metric"];
  CHECK(m["checkpoint_type"] == "dlio_benchmark");
  CHECK(m["checkpoint_count"] == 3);
  CHECK(m["load_checkpoint_count"] == 2);
  CHECK(m["checkpoint_size_bytes"] == 16061 + 96364);
  CHECK(m["save_checkpoint_duration_seconds"].size() == 3);
  CHECK(m["save_checkpoint_io_SI_GB_per_second"].size() == 3);
  // DLIO's GB is 2^30 bytes: checkpoint_size_GB is GiB; the SI figures are 10^9.
  CHECK(m["checkpoint_size_GB"].get<double>() == Approx((16061 + 96364) / 1073741824.0));
  CHECK(m["checkpoint_size_SI_GB"].get<double>() == Approx((16061 + 96364) / 1e9));
  CHECK(m["save_checkpoint_io_mean_GB_per_second"].get<double>() ==
        Approx(m["save_checkpoint_io_mean_SI_GB_per_second"].get<double>() * 1e9 / 1073741824.0));
  CHECK(m["save_checkpoint_io_mean_GB_per_second"].get<double>() > 0);
  CHECK(m["save_checkpoint_duration_mean_seconds"].get<double>() > 0);
  CHECK(m["load_checkpoint_duration_seconds"].size() == 2);
  CHECK(m["load_checkpoint_io_mean_GB_per_second"].get<double>() > 0);
  CHECK(m["load_checkpoint_bytes"][1] == 16061 + 96364);
  CHECK_FALSE(m.contains("train_au_percentage"));  // not a training run
  CHECK_FALSE(s.contains("storage_rules"));
  const json per_epoch = LoadJson(dir / "out/0_per_epoch_stats.json");
  // DLIO's checkpoint-only epoch "1": save_ckpt1..3, load_ckpt1..2 (ids are dlio's).
  CHECK(per_epoch["1"].contains("save_ckpt3"));
  CHECK(per_epoch["1"]["load_ckpt2"]["throughput"].get<double>() > 0);
  CHECK(per_epoch["1"]["load_ckpt1"]["id"] == 0);  // DLIO reads the first checkpoints written

  // checkpoint.fsync (true in the preset) is honoured: every file and both folders, per save.
  std::ifstream trace(dir / "out/trace-0-of-1.pfw");
  REQUIRE(trace);
  int fsyncs = 0;
  for (std::string line; std::getline(trace, line);) {
    if (line.find("\"name\":\"fsync\"") != std::string::npos) ++fsyncs;
  }
  CHECK(fsyncs == 3 * (2 + 2));

  // MLPerf's separate read phase: no writes, read the checkpoints an earlier run left.
  auto read = RunCommand(common + " ++workload.output.folder=" + dir / "out-read" +
                         " ++workload.checkpoint.num_checkpoints_write=0"
                         " ++workload.checkpoint.num_checkpoints_read=2");
  INFO(read.output);
  REQUIRE(read.exit_code == 0);
  const json rs = LoadJson(dir / "out-read/summary.json");
  CHECK_FALSE(rs["metric"].contains("checkpoint_count"));
  CHECK(rs["metric"]["load_checkpoint_count"] == 2);
  CHECK(rs["metric"]["checkpoint_size_bytes"] == 16061 + 96364);
  const json rp = LoadJson(dir / "out-read/0_per_epoch_stats.json");
  // DLIO's layout: the first ones, global_epoch1_step1 and 2
  CHECK(rp["1"]["load_ckpt1"]["id"] == 0);
  CHECK(rp["1"]["load_ckpt2"]["id"] == 1);
  CHECK(rs["metric"]["save_checkpoint_io_mean_GB_per_second"].is_null());  // DLIO: NaN

  TempDir empty;
  auto none = RunCommand(DlioRun() + " --workload llama3_8b --quiet" +
                         " ++workload.checkpoint.checkpoint_folder=" + empty / "ckpt" +
                         " ++workload.output.folder=" + empty / "out" +
                         " ++workload.checkpoint.time_between_checkpoints=0"
                         " ++workload.checkpoint.num_checkpoints_write=0");
  CHECK(none.exit_code == 1);
  CHECK(none.output.find("checkpoint.num_checkpoints_read is 10") != std::string::npos);
  CHECK(none.output.find(empty / "ckpt") != std::string::npos);
}

TEST_CASE("llama3 presets shrink with model overrides too, and state their full size") {
  TempDir dir;
  // The other way to run small: a smaller model. 2 layers, hidden 64, vocab 1000, ffn 256,
  // 8 heads (head size 8), 8 KV heads (K/V width 64): embedding 64,000; layer 64 + 64 x 192 +
  // 4096 + 64 + 32,768 + 16,384 = 65,664; total 2 x 64,000 + 2 x 65,664 + 64 = 259,392 params.
  auto r = RunCommand(
      DlioRun() + " --workload llama3_8b --set model.num_layers=2" +
      " --set model.transformer.hidden_size=64" + " --set model.transformer.vocab_size=1000" +
      " --set model.transformer.ffn_hidden_size=256" +
      " --set model.transformer.num_attention_heads=8" +
      " --set checkpoint.time_between_checkpoints=0" +
      " --set checkpoint.num_checkpoints_write=1 --set checkpoint.num_checkpoints_read=1" +
      " --set checkpoint.checkpoint_folder=" + dir / "ckpt" +
      " --set output.folder=" + dir / "out");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("transformer checkpoint: 259392 parameters") != std::string::npos);
  // fp16 model 518,784 bytes; optimizer 3 x (259,392 + 320) x 4 = 3,116,544 bytes.
  const fs::path ck = dir / "ckpt/global_epoch1_step1";
  CHECK(fs::file_size(ck / "zero_pp_rank_0_mp_rank_0_model_states.pt") == 518784);
  CHECK(fs::file_size(ck / "zero_pp_rank_0_mp_rank_0_optim_states.pt") == 3116544);
}

TEST_CASE("generate-only runs (--no-train) of a checkpointing preset write no checkpoint") {
  TempDir dir;
  auto r = RunCommand(DlioRun() + " --workload unet3d_a100 --no-train" + TinyOverrides(dir, "g"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("num_checkpoints_write") == std::string::npos);  // no checkpoint-only run
  CHECK_FALSE(fs::exists(dir / "ckpt-g"));
  const json s = LoadJson(dir / "out-g/summary.json");
  CHECK(s["generate"]["files_written"] == 4);
  CHECK_FALSE(s["metric"].contains("checkpoint_count"));
}

TEST_CASE("dlio-run list workloads shows every preset with a description") {
  auto list = RunCommand(DlioRun() + " list workloads");
  REQUIRE(list.exit_code == 0);
  for (const auto& p : dlio::WorkloadPresets()) {
    INFO(p.name);
    CHECK(list.output.find("  " + p.name + " ") != std::string::npos);
    CHECK(list.output.find(p.description) != std::string::npos);
  }
  CHECK(list.output.find("llama3_405b") != std::string::npos);
}
