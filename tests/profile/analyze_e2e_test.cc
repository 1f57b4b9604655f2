// `dlio-run analyze` on traces dlio-run wrote, and the analysis `dlio-run profile` leaves.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "test_util.h"

namespace dlio {
namespace {

using testing::ReadTextFile;
using testing::RunCommand;
using testing::TempDir;
using testing::WriteTextFile;

using dlio::testing::DlioRun;

nlohmann::json ReadJson(const std::string& path) {
  return nlohmann::json::parse(ReadTextFile(path), nullptr, /*allow_exceptions=*/false);
}

TEST_CASE("dlio-run analyze reports the bytes a traced dlio-run read") {
  TempDir dir;
  const std::string args =
      " --quiet --set dataset.format=npy --set dataset.data_folder=" + dir / "data" +
      " --set checkpoint.checkpoint_folder=" + dir / "ckpt" +
      " --set workflow.checkpoint=false --set dataset.num_files_train=4"
      " --set dataset.num_samples_per_file=2"
      " --set dataset.record_length_bytes=16384 --set reader.batch_size=2"
      " --set train.epochs=1 --set train.computation_time=0.0005";
  auto gen = RunCommand(DlioRun() + args + " --no-train --set output.folder=" + dir / "gen");
  REQUIRE(gen.exit_code == 0);
  auto run =
      RunCommand(DlioRun() + args + " --no-generate --trace --set output.folder=" + dir / "out");
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  const nlohmann::json summary = ReadJson(dir / "out/summary.json");
  REQUIRE(summary.is_object());
  auto analyze = RunCommand(DlioRun() + " analyze --json " + dir / "out" + " -o " + dir / "a.json");
  INFO(analyze.output);
  REQUIRE(analyze.exit_code == 0);
  const nlohmann::json a = ReadJson(dir / "a.json");
  REQUIRE(a.is_object());
  // dlio-run's own count of the bytes it read, and the trace's, agree exactly.
  CHECK(a["bytes_read"] == summary["io"]["read_bytes"]);
  CHECK(a["bytes_read"].get<int64_t>() > 0);
  // Every training file was read: its 2 samples of 16384 bytes at least, once per epoch.
  int64_t train_files = 0, train_bytes = 0;
  for (const auto& f : a["files_detail"]) {
    if (f["path"].get<std::string>().find("/train/") == std::string::npos) continue;
    ++train_files;
    train_bytes += f["bytes_read"].get<int64_t>();
    CHECK(f["bytes_read"].get<int64_t>() >= 2 * 16384);
    CHECK(f["opens"].get<int64_t>() >= 1);
  }
  CHECK(train_files == 4);
  CHECK(train_bytes == a["bytes_read"].get<int64_t>());  // nothing else was read
  CHECK(a["processes"] == 1);
  CHECK(a["has_app_events"] == true);
  CHECK(a["compute_time_s"].get<double>() > 0);
  CHECK(a["unoverlapped_io_time_s"].get<double>() <= a["io_wall_time_s"].get<double>());
  // The text form of the same analysis, with a chosen timeline width.
  auto text = RunCommand(DlioRun() + " analyze --timeline-us 1000 " + dir / "out/trace-0-of-1.pfw");
  REQUIRE(text.exit_code == 0);
  CHECK_THAT(text.output, Catch::Contains("Timeline (buckets of 1000 us") &&
                              Catch::Contains("unoverlapped I/O") && Catch::Contains("/train/"));
}

TEST_CASE("dlio-run analyze exits 2 naming a trace it cannot read") {
  TempDir dir;
  WriteTextFile(dir / "notes.txt", "not a trace\n");
  auto r = RunCommand(DlioRun() + " analyze " + dir / "notes.txt");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains(dir / "notes.txt"));
  r = RunCommand(DlioRun() + " analyze " + dir / "missing.pfw");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Catch::Contains("missing.pfw"));
  r = RunCommand(DlioRun() + " analyze");
  CHECK(r.exit_code == 2);  // a trace is required
}

TEST_CASE("dlio-run analyze -o replaces its own earlier output, never another file") {
  TempDir dir;
  WriteTextFile(dir / "t.pfw",
                "[\n{\"name\":\"read\",\"cat\":\"POSIX\",\"pid\":1,\"tid\":1,\"ts\":1,"
                "\"dur\":2,\"ph\":\"X\",\"args\":{\"fname\":\"/d/a\",\"count\":8,\"ret\":8}}\n");
  WriteTextFile(dir / "notes.txt", "my notes\n");
  auto r = RunCommand(DlioRun() + " analyze " + dir / "t.pfw" + " -o " + dir / "notes.txt");
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.output, Catch::Contains("notes.txt exists and is not an earlier output"));
  CHECK(ReadTextFile(dir / "notes.txt") == "my notes\n");
  for (const char* flags : {"", " --json", ""}) {  // text, JSON over text, text over JSON
    r = RunCommand(DlioRun() + " analyze" + flags + " " + dir / "t.pfw" + " -o " + dir / "a.out");
    INFO(r.output);
    CHECK(r.exit_code == 0);
  }
  CHECK_THAT(ReadTextFile(dir / "a.out"), Catch::StartsWith("dlio I/O analysis\n"));
}

TEST_CASE("dlio-run profile leaves analysis.json, analysis.txt and report.html beside the traces") {
  TempDir dir;
  std::filesystem::create_directory(dir / "data");
  WriteTextFile(dir / "data/f.bin", std::string(10000, 'x'));
  auto r = RunCommand(DlioRun() + " profile -o " + dir / "prof" + " --data-dir " + dir / "data" +
                      " -- cat " + dir / "data/f.bin" + " > /dev/null");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const nlohmann::json a = ReadJson(dir / "prof/analysis.json");
  REQUIRE(a.is_object());
  CHECK(a["bytes_read"] == 10000);
  CHECK(a["files"] == 1);
  CHECK_THAT(ReadTextFile(dir / "prof/analysis.txt"), Catch::Contains("data/f.bin"));
  CHECK_THAT(ReadTextFile(dir / "prof/report.html"), Catch::Contains("data/f.bin"));
  // No trace at all (nothing under --data-dir was touched): a warning, the exit code stands.
  WriteTextFile(dir / "exit3.sh", "exit 3\n");
  r = RunCommand(DlioRun() + " profile -o " + dir / "empty" + " --data-dir " + dir / "data" +
                 " -- sh " + dir / "exit3.sh");
  CHECK(r.exit_code == 3);
  CHECK_THAT(r.output, Catch::Contains("warning: no analysis written"));
  CHECK_FALSE(std::filesystem::exists(dir / "empty/analysis.json"));
}

}  // namespace
}  // namespace dlio
