// DFTracer's AI-logging events in dlio-run's trace, counted per rank as the Python DLIO's own test
// counts them (tests/dlio_ai_logging_test.py: check_ai_events matches `"cat":"X"` and `"name":"Y"`
// in each line of trace-<rank>-of-<ranks>.pfw), and dlio's analyze reading such a trace.
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>

#include "test_util.h"

namespace fs = std::filesystem;
using dlio::testing::ReadTextFile;
using dlio::testing::RunCommand;
using dlio::testing::TempDir;

namespace {

using dlio::testing::DlioRun;

// DLIO's check_ai_events: substring matches per line, brackets skipped.
std::map<std::string, int> CountAiEvents(const std::string& path) {
  static const std::pair<const char*, std::pair<const char*, const char*>> kEvents[] = {
      {"root", {"ai_root", "ai_root"}},
      {"compute", {"compute", "compute"}},
      {"item", {"data", "item"}},
      {"preprocess", {"data", "preprocess"}},
      {"fetch_iter", {"dataloader", "fetch.iter"}},
      {"ckpt_capture", {"checkpoint", "capture"}},
      {"ckpt_restart", {"checkpoint", "restart"}},
      {"train", {"pipeline", "train"}},
      {"eval", {"pipeline", "evaluate"}},
      {"epoch", {"pipeline", "epoch.block"}},
  };
  std::map<std::string, int> count;
  for (const auto& e : kEvents) count[e.first] = 0;
  std::istringstream lines(ReadTextFile(path));
  std::string line;
  while (std::getline(lines, line)) {
    if (line.find('[') != std::string::npos || line.find(']') != std::string::npos) continue;
    for (const auto& [key, cat_name] : kEvents) {
      if (line.find(std::string("\"cat\":\"") + cat_name.first + "\"") != std::string::npos &&
          line.find(std::string("\"name\":\"") + cat_name.second + "\"") != std::string::npos) {
        ++count[key];
      }
    }
  }
  return count;
}

// 2 epochs of `files` files of one sample each per rank, batch 1; `extra` adds settings.
std::string Args(const TempDir& dir, int ranks, int files, const std::string& extra) {
  return " --quiet --trace --set dataset.data_folder=" + dir / "data" +
         " --set output.folder=" + dir / "out" +
         " --set checkpoint.checkpoint_folder=" + dir / "ckpt" +
         " --set dataset.num_files_train=" + std::to_string(files * ranks) +
         " --set dataset.num_samples_per_file=1 --set dataset.record_length_bytes=1024"
         " --set reader.batch_size=1 --set train.epochs=2 --set train.computation_time=0" +
         extra;
}

std::string TraceOf(const TempDir& dir, int rank, int ranks) {
  return dir / ("out/trace-" + std::to_string(rank) + "-of-" + std::to_string(ranks) + ".pfw");
}

}  // namespace

TEST_CASE("dlio-run's trace holds DLIO's AI-logging events, as many as DLIO writes") {
  SECTION("training and evaluation: epoch, train, evaluate, fetch.iter and compute per step") {
    TempDir dir;
    auto r = RunCommand(DlioRun() + Args(dir, 1, 4,
                                         " --set workflow.evaluation=true"
                                         " --set dataset.num_files_eval=3"
                                         " --set reader.batch_size_eval=1"));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    REQUIRE(fs::exists(TraceOf(dir, 0, 1)));
    CHECK_FALSE(fs::exists(dir / "out/trace-0.pfw"));
    auto c = CountAiEvents(TraceOf(dir, 0, 1));
    CHECK(c["root"] == 1);
    CHECK(c["epoch"] == 2);
    CHECK(c["train"] == 2);
    CHECK(c["eval"] == 2);
    CHECK(c["fetch_iter"] == 2 * (4 + 3));
    CHECK(c["compute"] == 2 * (4 + 3));
    CHECK(c["item"] >= 2 * (4 + 3));
    CHECK(c["preprocess"] >= 2 * (4 + 3));  // DLIO traces an empty preprocess too
    CHECK(c["ckpt_capture"] == 0);
    CHECK(c["ckpt_restart"] == 0);
  }
  SECTION("checkpoints by step and by epoch: one capture each") {
    const int every = GENERATE(-1, 3);
    TempDir dir;
    auto r = RunCommand(DlioRun() + Args(dir, 1, 4,
                                         " --set workflow.checkpoint=true"
                                         " --set checkpoint.checkpoint_after_epoch=1"
                                         " --set checkpoint.epochs_between_checkpoints=1"
                                         " --set checkpoint.steps_between_checkpoints=" +
                                             std::to_string(every)));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    auto c = CountAiEvents(TraceOf(dir, 0, 1));
    CHECK(c["ckpt_capture"] == (every > 0 ? 2 * 4 / every : 2));
    CHECK(c["compute"] == 2 * 4);
    CHECK(c["fetch_iter"] == 2 * 4);
  }
  SECTION("checkpoint only: a compute before each checkpoint written and read") {
    TempDir dir;
    auto r = RunCommand(DlioRun() + Args(dir, 1, 1,
                                         " --set workflow.generate_data=false"
                                         " --set workflow.train=false"
                                         " --set workflow.checkpoint=true"
                                         " --set checkpoint.num_checkpoints_write=3"
                                         " --set checkpoint.num_checkpoints_read=2"));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    auto c = CountAiEvents(TraceOf(dir, 0, 1));
    CHECK(c["root"] == 1);
    CHECK(c["epoch"] == 0);
    CHECK(c["fetch_iter"] == 0);
    CHECK(c["ckpt_capture"] == 3);
    CHECK(c["ckpt_restart"] == 2);
    CHECK(c["compute"] == 3 + 2);
  }
}

TEST_CASE("dlio-run analyze reads a trace with DLIO's names: compute and epochs are seen") {
  TempDir dir;
  auto r = RunCommand(DlioRun() + Args(dir, 1, 4, " --set train.computation_time=0.002"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  auto a = RunCommand(DlioRun() + " analyze " + TraceOf(dir, 0, 1));
  INFO(a.output);
  REQUIRE(a.exit_code == 0);
  CHECK(a.output.find("compute time      - (the trace has no application events)") ==
        std::string::npos);
  CHECK(a.output.find("compute time ") != std::string::npos);
  auto fit = RunCommand(DlioRun() + " fit " + dir / "out" + " -o " + dir / "fit.yaml");
  INFO(fit.output);
  REQUIRE(fit.exit_code == 0);
  const std::string yaml = ReadTextFile(dir / "fit.yaml");
  CHECK(yaml.find("epochs: 2") != std::string::npos);
}

#ifdef DLIO_MPIEXEC
TEST_CASE("mpiexec -n 2: each rank's trace-<rank>-of-2.pfw holds its own AI-logging events") {
  TempDir dir;
  auto r = RunCommand(std::string(DLIO_MPIEXEC) + " -n 2 " + DlioRun() + Args(dir, 2, 3, ""));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  for (int rank = 0; rank < 2; ++rank) {
    CAPTURE(rank);
    auto c = CountAiEvents(TraceOf(dir, rank, 2));
    CHECK(c["root"] == 1);
    CHECK(c["epoch"] == 2);
    CHECK(c["train"] == 2);
    CHECK(c["fetch_iter"] == 2 * 3);
    CHECK(c["compute"] == 2 * 3);
    CHECK(c["item"] == 2 * 3);
  }
}
#endif
