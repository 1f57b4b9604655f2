// `dlio-run report` end to end: traces and a dlio run directory in, one HTML page out, written
// through a temporary name; an existing file that is not a dlio report is never replaced.
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "test_util.h"

namespace dlio {
namespace {

using dlio::testing::DlioRun;

// A .pfw trace: an open and reads of a file whose name needs escaping, and a compute event.
std::string PfwTrace() {
  std::string t = "[\n";
  t +=
      R"({"id":1,"name":"open64","cat":"POSIX","pid":7,"tid":7,"ts":1000,"dur":5,"ph":"X","args":{"fname":"/d/<a&b>.npz","ret":3}},)"
      "\n";
  for (int i = 0; i < 8; ++i) {
    t += R"({"id":)" + std::to_string(2 + i) +
         R"(,"name":"pread64","cat":"POSIX","pid":7,"tid":7,"ts":)" +
         std::to_string(1010 + i * 100) +
         R"(,"dur":20,"ph":"X","args":{"fname":"/d/<a&b>.npz","count":4096,"offset":)" +
         std::to_string(i * 4096) + R"(,"ret":4096}},)" + "\n";
  }
  t +=
      R"({"id":20,"name":"ai.compute.step","cat":"ai","pid":7,"tid":7,"ts":1040,"dur":50,"ph":"X","args":{}})"
      "\n]\n";
  return t;
}

TEST_CASE("dlio-run report: a trace file becomes one HTML page") {
  testing::TempDir dir;
  testing::WriteTextFile(dir / "t.pfw", PfwTrace());
  auto r = testing::RunCommand(DlioRun() + " report " + dir / "t.pfw" + " -o " + dir / "r.html");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("report of 10 events") != std::string::npos);
  const std::string page = testing::ReadTextFile(dir / "r.html");
  CHECK(page.find("<td>/d/&lt;a&amp;b&gt;.npz</td>") != std::string::npos);
  CHECK(page.find("<a&b>") == std::string::npos);
  CHECK(page.find("aria-label=\"Request-size histogram\"") != std::string::npos);
  CHECK(page.find("<title>8 reads of 1K_10K bytes</title>") != std::string::npos);
  CHECK(page.find("id=\"epochs\"") == std::string::npos);  // no run summary given
  // Nothing left beside it but the inputs (the temporary was renamed).
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    (void)e;
    ++files;
  }
  CHECK(files == 2);
}

TEST_CASE("dlio-run report: a run directory with summary.json adds the epoch charts") {
  testing::TempDir dir;
  std::filesystem::create_directories(dir / "run");
  testing::WriteTextFile(dir / "run/trace-0.pfw", PfwTrace());
  testing::WriteTextFile(dir / "run/summary.json",
                         R"({"metric":{"train_au_percentage":[95.5,97],)"
                         R"("train_throughput_samples_per_second":[1200,1300.5]}})");
  auto r = testing::RunCommand(DlioRun() + " report " + dir / "run" + " -o " + dir / "r.html" +
                               " --title 'My <run>'");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("with the run's per-epoch figures") != std::string::npos);
  const std::string page = testing::ReadTextFile(dir / "r.html");
  CHECK(page.find("<title>epoch 2: 1300.5 samples/s</title>") != std::string::npos);
  CHECK(page.find("<title>epoch 1: 95.5 %</title>") != std::string::npos);
  CHECK(page.find("<h1>My &lt;run&gt;</h1>") != std::string::npos);
}

TEST_CASE("dlio-run report: replaces an earlier report, never another file") {
  testing::TempDir dir;
  testing::WriteTextFile(dir / "t.pfw", PfwTrace());
  testing::WriteTextFile(dir / "notes.html", "<html>my notes</html>");
  auto refused =
      testing::RunCommand(DlioRun() + " report " + dir / "t.pfw" + " -o " + dir / "notes.html");
  CHECK(refused.exit_code == 1);
  CHECK(refused.output.find("notes.html exists and is not an earlier output of this command") !=
        std::string::npos);
  CHECK(testing::ReadTextFile(dir / "notes.html") == "<html>my notes</html>");
  const std::string cmd = DlioRun() + " report " + dir / "t.pfw" + " -o " + dir / "r.html";
  REQUIRE(testing::RunCommand(cmd).exit_code == 0);
  testing::WriteTextFile(dir / "t.pfw", "[\n]\n");  // now empty: the second page differs
  auto again = testing::RunCommand(cmd);
  INFO(again.output);
  CHECK(again.exit_code == 0);
  CHECK(testing::ReadTextFile(dir / "r.html").find("This trace has no events.") !=
        std::string::npos);
}

TEST_CASE("dlio-run report: an input that cannot be read is named") {
  testing::TempDir dir;
  auto r =
      testing::RunCommand(DlioRun() + " report " + dir / "missing.pfw" + " -o " + dir / "r.html");
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("missing.pfw") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "r.html"));
  auto usage = testing::RunCommand(DlioRun() + " report");
  CHECK(usage.exit_code == 2);
}

}  // namespace
}  // namespace dlio
