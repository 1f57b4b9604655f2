// `mpiexec -n 2 dlio-run profile -- PROGRAM`: each rank's process gets its own trace, named with
// the rank the launcher put in its environment.
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "preload_test_util.h"
#include "test_util.h"

namespace {

using dlio::preload_test::ArgOr;
using dlio::preload_test::ProcessName;
using dlio::preload_test::ReadEvents;
using dlio::preload_test::TraceFiles;
using dlio::testing::RunCommand;
using dlio::testing::TempDir;

TEST_CASE("profile under mpiexec: one trace per rank, its process named with the rank") {
  TempDir tmp;
  const std::string out = tmp / "prof";
  const std::string data = tmp / "data";
  std::filesystem::create_directory(data);
  const std::string in = data + "/in.bin";
  dlio::testing::WriteTextFile(in, std::string(100, 'r'));

  const auto run = RunCommand(
      std::string(DLIO_MPIEXEC) +
      " -n 2 '" DLIO_BINARY_DIR "/apps/dlio-run/dlio-run' profile --output '" + out +
      "' --data-dir '" + data + "' -- '" DLIO_PRELOAD_IO_PROGRAM "' after-exec '" + data + "'");
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  const auto files = TraceFiles(out);
  REQUIRE(files.size() == 2);
  std::set<std::string> ranks;
  std::set<int64_t> pids;
  for (const auto& file : files) {
    INFO(file);
    const std::string name = ProcessName(file);
    const size_t at = name.find("(rank ");
    REQUIRE(at != std::string::npos);
    ranks.insert(name.substr(at));
    const auto events = ReadEvents(file);
    REQUIRE(events.size() == 3);  // open, pread, close of in.bin
    CHECK(events[1].at("name") == "pread");
    CHECK(ArgOr(events[1], "offset") == 22);
    CHECK(ArgOr(events[1], "ret") == 33);
    pids.insert(events[0].at("pid").get<int64_t>());
  }
  CHECK(ranks == std::set<std::string>{"(rank 0)", "(rank 1)"});
  CHECK(pids.size() == 2);
  // No rank analyzes the others' traces while they may still be written: that is left to
  // `dlio-run analyze` after the job, as rank 0 says.
  CHECK(dlio::preload_test::DirectoryFiles(out).size() == 2);
  CHECK_THAT(run.output, Catch::Contains("2 ranks trace into " + out));
}

}  // namespace
