// libdlio_preload.so under `dlio-run profile` with real training programs: a PyTorch DataLoader
// whose fork workers read .npz files, and dlio-run itself against its own tracer.
#include <sys/stat.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "preload_test_util.h"
#include "test_util.h"

namespace {

using dlio::preload_test::ArgOr;
using dlio::preload_test::Covers;
using dlio::preload_test::ReadEvents;
using dlio::preload_test::Spans;
using dlio::preload_test::TraceFiles;
using dlio::testing::RunCommand;
using dlio::testing::TempDir;
using nlohmann::json;

constexpr int kSkipped = 77;  // the ctest SKIP_RETURN_CODE of this executable
const std::string kDlioRun = DLIO_BINARY_DIR "/apps/dlio-run/dlio-run";

// The last line of a command's output (its JSON answer; warnings may come before it).
std::string LastLine(const std::string& output) {
  std::string s = output;
  while (!s.empty() && s.back() == '\n') s.pop_back();
  const size_t nl = s.rfind('\n');
  return nl == std::string::npos ? s : s.substr(nl + 1);
}

TEST_CASE("profile: every npz byte a PyTorch DataLoader's fork workers read, at its offset") {
  const std::string python = dlio::testing::SystemPython();
  if (RunCommand("'" + python + "' -c 'import torch'").exit_code != 0) {
    std::fprintf(stderr,
                 "SKIPPED: %s cannot import torch (Debian package python3-torch, which "
                 "`./setup.sh test` installs)\n",
                 python.c_str());
    std::fflush(stderr);
    std::exit(kSkipped);
  }
  TempDir tmp;
  const std::string out = tmp / "prof";
  const std::string data = tmp / "data";
  std::filesystem::create_directory(data);
  const std::string script = DLIO_SOURCE_DIR "/tests/preload/torch_dataloader.py";

  // The files and their members' data spans, from the zip layout (made without the tracer).
  const auto made = RunCommand("'" + python + "' '" + script + "' make '" + data + "'");
  INFO(made.output);
  REQUIRE(made.exit_code == 0);
  const json layout = json::parse(LastLine(made.output));
  REQUIRE(layout.size() == 6);

  const auto run = RunCommand("'" + kDlioRun + "' profile --output '" + out + "' --data-dir '" +
                              data + "' -- '" + python + "' '" + script + "' load '" + data + "'");
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  long parent = 0;
  REQUIRE(std::sscanf(LastLine(run.output).c_str(), "parent %ld", &parent) == 1);

  // Only the two workers read the files; each wrote its own trace although it ends with _exit.
  std::vector<json> reads;
  std::set<int64_t> reader_pids;
  for (const auto& file : TraceFiles(out)) {
    for (json& e : ReadEvents(file)) {
      if (ArgOr(e, "count") < 0) continue;
      INFO(e.dump());
      CHECK(e.at("name").get<std::string>().find("read") != std::string::npos);
      CHECK(ArgOr(e, "offset") >= 0);
      CHECK(ArgOr(e, "ret") <= ArgOr(e, "count"));
      const std::string fname = e.at("args").at("fname");
      REQUIRE(layout.contains(fname));
      CHECK(ArgOr(e, "offset") + ArgOr(e, "ret") <=
            static_cast<int64_t>(std::filesystem::file_size(fname)));
      reader_pids.insert(e.at("pid").get<int64_t>());
      reads.push_back(std::move(e));
    }
  }
  CHECK(reader_pids.size() == 2);
  CHECK(reader_pids.count(parent) == 0);

  // Every byte of every member numpy decoded is inside a traced read.
  for (const auto& [fname, members] : layout.items()) {
    const auto spans = Spans(reads, fname);
    for (const json& m : members) {
      INFO(fname << " member [" << m[0] << ", " << m[1] << ")");
      CHECK(Covers(spans, m[0].get<int64_t>(), m[1].get<int64_t>()));
    }
  }

  // 3 batches of 2 files: one worker read two. PyTorch collated its first into a new
  // shared-memory tensor (shm_open), so the first call it made after that, the open of its
  // second batch's first file, carries "shm" after exactly 2 files; no other event does (the
  // other batches' collates came after the workers' last traced calls).
  int64_t marked = 0;
  for (const auto& file : TraceFiles(out)) {
    std::vector<json> events = ReadEvents(file);
    std::stable_sort(events.begin(), events.end(), [](const json& a, const json& b) {
      return a.value("ts", int64_t{0}) < b.value("ts", int64_t{0});
    });
    std::set<std::string> files_before;
    for (const json& e : events) {
      if (e.at("ph") != "X") continue;
      if (ArgOr(e, "shm") >= 1) {
        INFO(e.dump());
        ++marked;
        CHECK(ArgOr(e, "shm") == 1);
        CHECK(files_before.size() == 2);
      }
      if (e.contains("args") && e.at("args").contains("fname")) {
        files_before.insert(e.at("args").at("fname").get<std::string>());
      }
    }
  }
  CHECK(marked == 1);
}

// (file, offset, bytes) of every read of a file under `data` in `events`.
using Read = std::tuple<std::string, int64_t, int64_t>;
std::multiset<Read> DataReads(const std::vector<json>& events, const std::string& data) {
  std::multiset<Read> reads;
  for (const json& e : events) {
    if (e.at("ph") != "X" || !e.contains("args") || !e.at("args").contains("fname")) continue;
    const std::string name = e.at("name");
    const std::string fname = e.at("args").at("fname");
    if (name.find("read") == std::string::npos || ArgOr(e, "count") < 0 ||
        fname.rfind(data + "/", 0) != 0) {
      continue;
    }
    reads.emplace(fname, ArgOr(e, "offset"), ArgOr(e, "ret"));
  }
  return reads;
}

TEST_CASE("profile: dlio-run under the interposer makes the requests its own tracer records") {
  TempDir tmp;
  const std::string data = tmp / "data";
  const std::string args = " --quiet --set dataset.data_folder=" + data +
                           " --set output.folder=" + tmp / "out" +
                           " --set checkpoint.checkpoint_folder=" + tmp / "ckpt" +
                           " --set dataset.num_files_train=4 --set dataset.num_samples_per_file=3"
                           " --set dataset.record_length_bytes=10000 --set reader.batch_size=2"
                           " --set train.epochs=2 --set train.computation_time=0"
                           // native: one pread per traced read (the numpy model's reads that
                           // reach the end of a file add a 0-byte pread below them).
                           " --set reader.io_model=native";
  const auto generated = RunCommand("'" + kDlioRun + "'" + args);  // the dataset, untraced
  INFO(generated.output);
  REQUIRE(generated.exit_code == 0);

  const std::string out = tmp / "prof";
  const auto run = RunCommand("'" + kDlioRun + "' profile --output '" + out + "' --data-dir '" +
                              data + "' -- '" + kDlioRun + "'" + args + " --trace");
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  const auto files = TraceFiles(out);
  REQUIRE(files.size() == 1);
  std::multiset<Read> interposed;
  for (const json& e : ReadEvents(files[0])) {
    for (const Read& r : DataReads({e}, data)) interposed.insert(r);
  }
  const json builtin = json::parse(dlio::testing::ReadTextFile(tmp / "out/trace-0-of-1.pfw"));
  const std::multiset<Read> own = DataReads(builtin.get<std::vector<json>>(), data);
  CHECK(own.size() >= 4 * 3 * 2);  // every sample in both epochs
  CHECK(interposed == own);
}

TEST_CASE("profile passes every word after -- to the program, even dlio-run's own options") {
  TempDir tmp;
  const auto run =
      RunCommand("'" + kDlioRun + "' profile --output '" + tmp / "prof" + "' --data-dir '" +
                 tmp.path() + "' -- '" + dlio::testing::SystemPython() +
                 "' -c 'import sys; print(sys.argv[1:])' --trace -c x -- --set");
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  // (Then a warning: the program touched no traced file, so there is nothing to analyze.)
  CHECK_THAT(run.output, Catch::Contains("['--trace', '-c', 'x', '--', '--set']\n"));
}

}  // namespace
