// What a run leaves behind: output files on a full disk, dataset.keep_files, the summary line of
// a generate-only run, and the page-cache warning (defect 15 of issue 9).
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "../format/full_storage.h"
#include "dlio/comm.h"
#include "dlio/config.h"
#include "dlio/runner.h"
#include "dlio/storage.h"
#include "dlio/storage_wrapper.h"
#include "runner/epoch_stats.h"
#include "runner/report.h"
#include "runner/run_context.h"
#include "runner/storage_rules.h"
#include "test_util.h"

namespace dlio {
namespace {

namespace fs = std::filesystem;

WorkloadConfig Tiny(const std::string& data) {
  WorkloadConfig c;
  c.workflow.generate_data = true;
  c.workflow.train = true;
  c.dataset.data_folder = data;
  c.dataset.format = "npy";
  c.dataset.num_files_train = 4;
  c.dataset.num_samples_per_file = 2;
  c.dataset.record_length_bytes = 1024;
  c.reader.batch_size = 2;
  c.train.epochs = 1;
  c.train.computation_time = DistributionSpec();
  return c;
}

std::vector<std::string> Files(const std::string& dir) {
  std::vector<std::string> names;
  if (!fs::exists(dir)) return names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST_CASE("output files on a full disk: no temporary left, the error carries errno's text") {
  testing::FullStorage out(/*capacity=*/0);
  WorkloadConfig c = Tiny("data");
  c.output.folder = "out";
  REQUIRE(out.CreateDirs("out").ok());
  auto comm = MakeSerialComm();
  RunReport report;
  Status status = WriteReports(c, comm.get(), 0, 1, &out, &report);
  REQUIRE_FALSE(status.ok());
  CHECK_THAT(status.message(), Catch::Contains("out/0_per_epoch_stats.json") &&
                                   Catch::Contains("No space left on device"));
  CHECK(*out.List("out") == std::vector<std::string>{});
}

TEST_CASE("a generate-only run's summary names no checkpointer") {
  WorkloadConfig c = Tiny("data");
  c.workflow.train = false;
  c.workflow.checkpoint = true;  // the config checkpoints while training; this run only generates
  auto comm = MakeSerialComm();
  RunReport report;
  REQUIRE(WriteReports(c, comm.get(), 0, 1, nullptr, &report).ok());
  CHECK_THAT(report.summary_text,
             Catch::Contains(", generate only") && !Catch::Contains("checkpoint only"));
  report.checkpoint_type = "paper";  // a checkpoint-only run
  c.workflow.generate_data = false;
  REQUIRE(WriteReports(c, comm.get(), 0, 1, nullptr, &report).ok());
  CHECK_THAT(report.summary_text, Catch::Contains("checkpoint only (paper checkpointer)"));
}

TEST_CASE("the dataset-smaller-than-5x-memory warning is not given for O_DIRECT reads") {
  WorkloadConfig c = Tiny("data");  // 8 KiB: far below 5x any host's memory
  auto comm = MakeSerialComm();
  for (bool odirect : {false, true}) {
    CAPTURE(odirect);
    c.reader.odirect = odirect;
    RunReport report;
    RunEnv env;
    runner_internal::RunMessages messages(env, 0, &report.warnings);
    runner_internal::RunContext ctx;
    ctx.config = &c;
    ctx.comm = comm.get();
    ctx.messages = &messages;
    auto check = runner_internal::CheckStorageRules(ctx);
    REQUIRE(check.ok());
    CHECK_FALSE(check->dataset_ge_5x_memory);
    const bool warned = std::any_of(
        report.warnings.begin(), report.warnings.end(),
        [](const std::string& w) { return w.find("smaller than 5x") != std::string::npos; });
    CHECK(warned == !odirect);
  }
}

TEST_CASE("dataset.keep_files false removes what the run generated, nothing else") {
  testing::TempDir dir;
  RunEnv env;
  env.write_outputs = false;
  WorkloadConfig c = Tiny(dir / "data");
  c.output.folder = dir / "out";

  // Kept (the default): the run's files stay.
  auto kept = RunWorkload(c, env);
  INFO(kept.status().ToString());
  REQUIRE(kept.ok());
  const std::vector<std::string> dataset = Files(dir / "data/train");
  REQUIRE(dataset.size() == 4);

  // Present before the run: not this run's, kept although keep_files is false.
  c.dataset.keep_files = false;
  auto again = RunWorkload(c, env);
  REQUIRE(again.ok());
  CHECK(again->generate.files_skipped == 4);
  CHECK(Files(dir / "data/train") == dataset);

  // Two files removed by hand: the run writes them, trains, then removes those two only; the
  // user's file, the marker and the folders stay.
  fs::remove(dir / "data/train" + "/" + dataset[0]);
  fs::remove(dir / "data/train" + "/" + dataset[3]);
  testing::WriteTextFile(dir / "data/train/notes.txt", "mine");
  auto removing = RunWorkload(c, env);
  INFO(removing.status().ToString());
  REQUIRE(removing.ok());
  CHECK(removing->generate.files_written == 2);
  CHECK(removing->generate.created_files.size() == 2);
  CHECK(Files(dir / "data/train") == std::vector<std::string>{dataset[1], dataset[2], "notes.txt"});
  CHECK(fs::exists(dir / "data/.dlio-dataset.json"));
}

// DLIO's png holds uint8 pixels whatever record_element_type says: record_dims [16, 16] of
// float32 are 256-byte records, 16 x 16 images (not the 32 x 32 of 1024 bytes). RunWorkload and
// PreflightRun make their config through RunConfigFor, which asks the format.
TEST_CASE("png records of record_dims are one byte per element whatever the element type") {
  testing::TempDir dir;
  RunEnv env;
  env.write_outputs = false;
  WorkloadConfig c = Tiny(dir / "data");
  c.dataset.format = "png";
  c.dataset.num_samples_per_file = 1;
  c.workflow.train = false;
  REQUIRE(ApplyOverride(&c, "dataset.record_dims=[16, 16]").ok());
  REQUIRE(ApplyOverride(&c, "dataset.record_element_type=float32").ok());
  REQUIRE(c.dataset.record_length_bytes == 1024);  // parsing alone counts the element type
  REQUIRE(PreflightRun(c, env).ok());
  auto run = RunWorkload(c, env);
  INFO(run.status().ToString());
  REQUIRE(run.ok());
  const std::vector<std::string> files = Files(dir / "data/train");
  REQUIRE(files.size() == 4);
  const std::string png = testing::ReadTextFile(dir / "data/train" + "/" + files[0]);
  REQUIRE(png.size() > 24);
  auto big_endian32 = [&png](size_t at) {
    uint32_t v = 0;
    for (size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<uint8_t>(png[at + i]);
    return v;
  };
  CHECK(png.compare(12, 4, "IHDR") == 0);
  CHECK(big_endian32(16) == 16);  // width
  CHECK(big_endian32(20) == 16);  // height
}

// One training step of `load_ms` + `compute_ms` and 4 samples of 100 bytes.
StepRecord Step(int64_t load_ms, int64_t compute_ms) {
  StepRecord s;
  s.load_ns = load_ms * 1'000'000;
  s.compute_ns = compute_ms * 1'000'000;
  s.samples = 4;
  s.bytes = 400;
  return s;
}

constexpr int64_t kT0 = 1'700'000'000'000'000;  // wall microseconds

// An epoch of 3 steps with a step-cadence save after step 2: block1 (steps 1-2, 1.5 s), the save
// (0.25 s, 2 GiB over all ranks), block2 (step 3, 0.75 s); then an evaluation of 1 step.
RunReport HandMadeRun() {
  RunReport r;
  EpochReport e;
  e.epoch = 1;
  e.steps = {Step(250, 500), Step(250, 500), Step(250, 500)};
  e.start_us = kT0;
  BlockReport b1, b2;
  b1.start_us = kT0;
  b1.end_us = kT0 + 1'500'000;
  b1.steps = 2;
  b1.metrics.au_percent = 66.5;
  b1.metrics.samples_per_s = 5.25;
  b2.start_us = kT0 + 1'750'000;
  b2.end_us = kT0 + 2'500'000;
  b2.first_step = 2;
  b2.steps = 1;
  e.blocks = {b1, b2};
  e.end_us = b2.end_us;
  CheckpointSpan save;
  save.block = 1;
  save.index = 0;
  save.start_us = kT0 + 1'500'000;
  save.end_us = kT0 + 1'750'000;
  e.saves = {save};
  r.epochs.push_back(e);
  CheckpointResult cp;
  cp.id = 7;
  cp.bytes_written = 1 << 30;
  r.checkpoints.push_back(cp);
  r.checkpoint_saves_all.push_back({2ull << 30, 0.25});
  EpochReport eval;
  eval.epoch = 1;
  eval.start_us = kT0 + 2'500'000;
  eval.end_us = kT0 + 3'125'000;
  eval.steps = {Step(125, 500)};
  eval.metrics.au_percent = 80;
  r.eval_epochs.push_back(eval);
  return r;
}

TEST_CASE("per_epoch_stats.json has DLIO's keys: blocks split at saves, save_ckpt, eval") {
  const RunReport r = HandMadeRun();
  const nlohmann::ordered_json j = PerEpochStatsJson(r);
  REQUIRE(j.contains("1"));
  const auto& e = j["1"];
  std::vector<std::string> keys;
  for (const auto& kv : e.items()) keys.push_back(kv.key());
  // DLIO's keys in DLIO's order, then dlio's (steps, au, throughput, io_*).
  REQUIRE(keys.size() >= 7);
  CHECK(std::vector<std::string>(keys.begin(), keys.begin() + 7) ==
        std::vector<std::string>{"start", "block1", "save_ckpt1", "block2", "end", "duration",
                                 "eval"});
  CHECK(e["start"] == DlioTimestamp(kT0));
  CHECK(e["start"].get<std::string>().size() == 26);  // 2023-11-14T22:13:20.000000
  CHECK(e["duration"] == "2.50");                     // a string, as DLIO: the steps and the save
  CHECK(e["duration_seconds"].get<double>() == Approx(2.5));  // dlio's, unrounded
  CHECK(e["end"] == DlioTimestamp(kT0 + 3'125'000));          // after the evaluation
  CHECK(e["block1"]["duration"] == "1.50");
  CHECK(e["block2"]["start"] == DlioTimestamp(kT0 + 1'750'000));
  CHECK(e["block2"]["duration"] == "0.75");
  CHECK(e["eval"]["duration"] == "0.62");  // 0.625 rounded as Python's '{:.2f}'
  const auto& save = e["save_ckpt1"];
  CHECK(save["duration"].get<double>() == Approx(0.25));        // a number here
  CHECK(save["throughput"].get<double>() == Approx(2 / 0.25));  // GiB of all ranks / s
  CHECK(save["id"] == 7);
  CHECK(save["bytes"] == 1u << 30);
  CHECK_FALSE(e.contains("load_ckpt1"));
}

// A storage with statistics of its own: counts OnEpochPlan's files and reports them as "foo".
class PlanCountingStorage : public StorageWrapper {
 public:
  PlanCountingStorage() : StorageWrapper("foo", NewMemoryStorage()) {}
  Status OnEpochPlan(const EpochPlan& plan) override {
    planned_.clear();
    for (uint64_t e = plan.first_epoch; e <= plan.last_epoch; ++e) {
      DLIO_RETURN_NOT_OK(plan.files_of(e, &planned_));
    }
    return StorageWrapper::OnEpochPlan(plan);
  }
  void TakeEpochStats(EpochStatsSink* sink) override {
    if (sink != nullptr) {
      StatsBlock block;
      block.name = "foo";
      block.epoch_json = "{\"planned\": " + std::to_string(planned_.size()) + "}";
      block.summary_json = "{\"unit\": \"files\"}";
      block.progress = "foo " + std::to_string(planned_.size()) + " planned";
      sink->blocks.push_back(std::move(block));
    }
    planned_.clear();
    StorageWrapper::TakeEpochStats(sink);
  }
  const std::vector<std::string>& planned() const { return planned_; }

 private:
  std::vector<std::string> planned_;
};

TEST_CASE("storage epoch hooks pass through wrappers, their blocks reach the reports unchanged") {
  auto counting = std::make_unique<PlanCountingStorage>();
  PlanCountingStorage* inner = counting.get();
  StorageWrapper outer("outer", std::move(counting));
  EpochPlan plan;
  plan.first_epoch = 1;
  plan.last_epoch = 2;
  plan.files_of = [](uint64_t epoch, std::vector<std::string>* paths) {
    paths->push_back("f" + std::to_string(epoch));
    return Status::OK();
  };
  REQUIRE(outer.OnEpochPlan(plan).ok());
  CHECK(inner->planned() == std::vector<std::string>{"f1", "f2"});
  RunReport r;
  for (uint64_t epoch : {1, 2}) {
    EpochStatsSink sink;
    sink.epoch = epoch;
    outer.TakeEpochStats(&sink);
    REQUIRE(sink.blocks.size() == 1);
    EpochReport e;
    e.epoch = epoch;
    e.storage_stats = std::move(sink.blocks);
    r.epochs.push_back(std::move(e));
  }
  CHECK(inner->planned().empty());  // taken: reset
  // The first epoch's block counted the two planned files, the second none (reset by the take).
  const nlohmann::ordered_json per_epoch = PerEpochStatsJson(r);
  CHECK(per_epoch["1"]["foo"]["planned"] == 2);
  CHECK(per_epoch["2"]["foo"]["planned"] == 0);
  nlohmann::json summary;
  AddStorageStatsSummary(r.epochs, &summary);
  CHECK(summary["foo"] == nlohmann::json::parse(
                              R"({"unit": "files", "epochs": [{"epoch": 1, "planned": 2},
                                                              {"epoch": 2, "planned": 0}]})"));
  CHECK_THAT(FormatEpochLine("train", r.epochs[0]), Catch::EndsWith(", foo 2 planned"));
  // A block whose epoch JSON sits under a key (the cache's "levels").
  r.epochs[0].storage_stats[0].epoch_key = "levels";
  r.epochs[0].storage_stats[0].epoch_json = "[1, 2]";
  nlohmann::json keyed;
  AddStorageStatsSummary(r.epochs, &keyed);
  CHECK(keyed["foo"]["epochs"][0] == nlohmann::json::parse(R"({"epoch": 1, "levels": [1, 2]})"));
}

TEST_CASE("output.json has DLIO's per-block and eval step lists and host keys") {
  const RunReport r = HandMadeRun();
  RankHostInfo host;
  host.memory_gb = 16;
  host.cpu_count = 2;
  host.hostname = "node7";
  const nlohmann::ordered_json j = RankOutputJson(r, host);
  for (const char* k : {"host_memory_GB", "host_cpu_count", "host_processor_name",
                        "potential_caching", "host_cpuinfo", "host_meminfo", "1", "hostname"}) {
    CAPTURE(k);
    CHECK(j.contains(k));
  }
  CHECK(j["hostname"] == "node7");
  CHECK(j.items().begin().key() == "host_memory_GB");
  const auto& e = j["1"];
  REQUIRE(e["load"].size() == 3);  // block1, block2, eval
  CHECK(e["load"]["block1"].size() == 2);
  CHECK(e["load"]["block2"].size() == 1);
  CHECK(e["proc"]["block1"][0].get<double>() == Approx(0.75));  // load + compute
  CHECK(e["compute"]["block2"][0].get<double>() == Approx(0.5));
  CHECK(e["load"]["eval"][0].get<double>() == Approx(0.125));
  CHECK(e["au"]["block1"].get<double>() == Approx(66.5));
  CHECK(e["throughput"]["block1"].get<double>() == Approx(5.25));
  CHECK(e["au"]["eval"].get<double>() == Approx(80));
  CHECK(e["bytes"]["block2"][0] == 400);  // dlio's
  CHECK(e["end"] == DlioTimestamp(kT0 + 3'125'000));
}

TEST_CASE("a checkpoint-only run's per_epoch_stats.json: epoch 1 with save_ckptN and load_ckptN") {
  RunReport r;
  r.checkpoint_only_start_us = kT0;
  r.checkpoint_only_end_us = kT0 + 3'000'000;
  CheckpointResult cp;
  cp.id = 3;
  cp.bytes_read = 512;
  r.checkpoint_loads = {cp, cp};
  r.checkpoint_loads_all = {{1ull << 30, 1}, {1ull << 30, 1}};
  for (size_t i = 0; i < 2; ++i) {
    CheckpointSpan s;
    s.block = i + 1;
    s.index = i;
    s.start_us = kT0 + static_cast<int64_t>(i) * 1'000'000;
    s.end_us = s.start_us + 500'000;
    r.checkpoint_only_loads.push_back(s);
  }
  const nlohmann::ordered_json j = PerEpochStatsJson(r);
  REQUIRE(j.size() == 1);
  const auto& e = j["1"];
  CHECK(e.size() == 4);  // start, load_ckpt1, load_ckpt2, end: DLIO writes no duration here
  CHECK(e["load_ckpt2"]["throughput"].get<double>() == Approx(2.0));  // 1 GiB in 0.5 s
  CHECK(e["load_ckpt1"]["bytes"] == 512);
  CHECK(RankOutputJson(r, RankHostInfo())["1"]["load"].empty());
}

TEST_CASE("checkpointing on but no save: DLIO's save_checkpoint_* keys are there, NaN as null") {
  WorkloadConfig c = Tiny("data");
  c.workflow.checkpoint = true;
  auto comm = MakeSerialComm();
  RunReport report;
  REQUIRE(WriteReports(c, comm.get(), 0, 1, /*out=*/nullptr, &report).ok());
  const nlohmann::json m = nlohmann::json::parse(report.summary_json)["metric"];
  for (const char* k :
       {"save_checkpoint_io_mean_GB_per_second", "save_checkpoint_io_stdev_GB_per_second",
        "save_checkpoint_duration_mean_seconds", "save_checkpoint_duration_stdev_seconds"}) {
    CAPTURE(k);
    REQUIRE(m.contains(k));
    CHECK(m[k].is_null());
  }
  CHECK(m["checkpoint_size_GB"] == 0.0);
  CHECK_FALSE(m.contains("load_checkpoint_io_mean_GB_per_second"));  // DLIO: only after loads
  CHECK_FALSE(m.contains("checkpoint_count"));

  c.workflow.checkpoint = false;
  RunReport plain;
  REQUIRE(WriteReports(c, comm.get(), 0, 1, nullptr, &plain).ok());
  CHECK_FALSE(nlohmann::json::parse(plain.summary_json)["metric"].contains("checkpoint_size_GB"));
}

}  // namespace
}  // namespace dlio
