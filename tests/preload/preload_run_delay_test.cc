// The run-queue delay libdlio_preload.so records with events ("rqd", run_delay.h): every thread
// of every process (a forked child included) carries its own, cumulative, read at most once per
// 200 us of the thread's time; none with DLIO_PRELOAD_NO_RUN_DELAY.
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "preload_test_util.h"
#include "test_util.h"

namespace {

using dlio::preload_test::ArgOr;
using dlio::preload_test::ReadEvents;
using dlio::preload_test::TraceFiles;
using dlio::testing::RunCommand;
using dlio::testing::TempDir;
using nlohmann::json;

// The `fork` run of the test program (a read on a second thread, a child process) traced into
// out/, with `env` before the command; returns how many events carried "rqd".
int64_t TracedForkRun(const std::string& env) {
  TempDir tmp;
  const std::string out = tmp / "out", data = tmp / "data";
  for (const auto& d : {out, data}) std::filesystem::create_directory(d);
  dlio::testing::WriteTextFile(data + "/in.bin", std::string(4096, 'y'));
  const auto result = RunCommand(
      env + " DLIO_PRELOAD_OUTPUT='" + out + "' DLIO_PRELOAD_DATA_DIRS='" + data +
      "' LD_PRELOAD='" DLIO_PRELOAD_LIB "' '" DLIO_PRELOAD_IO_PROGRAM "' fork '" + data + "'");
  INFO(result.output);
  REQUIRE(result.exit_code == 0);
  const auto files = TraceFiles(out);
  REQUIRE(files.size() == 2);
  int64_t with = 0;
  for (const auto& path : files) {
    // Per thread: the last value and when it was read (the event's end).
    std::map<std::pair<int64_t, int64_t>, std::pair<int64_t, int64_t>> last;
    for (const json& e : ReadEvents(path)) {
      if (e.at("ph") != "X") continue;
      INFO(e.dump());
      const int64_t delay = ArgOr(e, "rqd");
      const std::pair<int64_t, int64_t> thread{e.at("pid"), e.at("tid")};
      const int64_t end = e.at("ts").get<int64_t>() + e.at("dur").get<int64_t>();
      auto it = last.find(thread);
      // A thread's first event reads it.
      if (env.empty()) CHECK((it != last.end() || delay >= 0));
      if (delay < 0) continue;
      ++with;
      if (it != last.end()) {
        CHECK(delay >= it->second.first);       // cumulative
        CHECK(end - it->second.second >= 200);  // once per 200 us at most
      }
      last[thread] = {delay, end};
    }
    if (env.empty()) CHECK(last.size() >= 1);
  }
  return with;
}

TEST_CASE("preload records each thread's run-queue delay, cumulative, once per 200 us at most") {
  // The parent's two threads and the child's.
  CHECK(TracedForkRun("") >= 3);
}

TEST_CASE("preload records no run-queue delay with DLIO_PRELOAD_NO_RUN_DELAY") {
  CHECK(TracedForkRun("DLIO_PRELOAD_NO_RUN_DELAY=1") == 0);
}

}  // namespace
