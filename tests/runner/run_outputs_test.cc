// What a run leaves behind: output files on a full disk, dataset.keep_files, the summary line of
// a generate-only run, and the page-cache warning (defect 15 of issue 9).
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "../format/full_storage.h"
#include "dlio/comm.h"
#include "dlio/runner.h"
#include "dlio/storage.h"
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

}  // namespace
}  // namespace dlio
