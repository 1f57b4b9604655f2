// profiling.profiler: iostat, as the Python DLIO runs it: rank 0 runs `iostat -mdxtcy -o JSON 1`
// into output.folder/iostat.json and stops it with SIGINT; without iostat the run is refused
// naming the key.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "test_util.h"

namespace fs = std::filesystem;
using dlio::testing::ReadTextFile;
using dlio::testing::RunCommand;
using dlio::testing::TempDir;
using dlio::testing::WriteTextFile;

namespace {

using dlio::testing::DlioRun;

// A tiny run with workflow.profiling and profiling.profiler iostat, its PATH being `path`.
dlio::testing::CommandResult RunWithPath(const TempDir& dir, const std::string& path) {
  return RunCommand("env PATH=" + path + " " + DlioRun() + " --quiet --set dataset.data_folder=" +
                    dir / "data" + " --set output.folder=" + dir / "out" +
                    " --set dataset.num_files_train=4 --set dataset.num_samples_per_file=1"
                    " --set dataset.record_length_bytes=1024 --set reader.batch_size=1"
                    " --set train.epochs=1 --set train.computation_time=0.05"
                    " --set workflow.generate_data=true --set workflow.profiling=true"
                    " --set profiling.profiler=iostat");
}

}  // namespace

TEST_CASE("profiling.profiler iostat runs DLIO's iostat command into output.folder/iostat.json") {
  TempDir dir;
  fs::create_directories(dir / "bin");
  // Stands in for sysstat's iostat: records its arguments, writes a JSON document, waits.
  WriteTextFile(dir / "bin/iostat", "#!/bin/sh\necho \"$@\" > " + dir / "args" +
                                        "\nprintf '{\"sysstat\": {\"hosts\": []}}\\n'\n"
                                        "exec sleep 1000\n");
  fs::permissions(dir / "bin/iostat", fs::perms::owner_all);
  auto r = RunWithPath(dir, dir / "bin" + ":/usr/bin:/bin");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(ReadTextFile(dir / "args") == "-mdxtcy -o JSON 1\n");
  REQUIRE(fs::exists(dir / "out/iostat.json"));
  CHECK(nlohmann::json::parse(ReadTextFile(dir / "out/iostat.json")).contains("sysstat"));
  for (const auto& e : fs::directory_iterator(dir / "out")) {
    CHECK(e.path().filename().string().find(".tmp-") == std::string::npos);
  }
}

TEST_CASE("profiling.profiler iostat without an iostat program is refused naming the key") {
  TempDir dir;
  fs::create_directories(dir / "empty");
  auto r = RunWithPath(dir, dir / "empty");
  INFO(r.output);
  CHECK(r.exit_code != 0);
  CHECK(r.output.find("profiling.profiler") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "data"));  // refused before generation
  CHECK(r.output.find("sysstat") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "out/iostat.json"));
}

TEST_CASE("profiling.profiler iostat with sysstat's iostat writes its JSON report") {
  if (RunCommand("command -v iostat").exit_code != 0) std::exit(77);  // sysstat not installed
  TempDir dir;
  auto r = RunWithPath(dir, std::getenv("PATH") != nullptr ? std::getenv("PATH") : "/usr/bin");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto report = nlohmann::json::parse(ReadTextFile(dir / "out/iostat.json"));
  CHECK(report["sysstat"]["hosts"].is_array());
}
