// A run (generate, then train 3 epochs) on the tiered storage over a slow source: later epochs
// are served by the cache, per-epoch statistics reach the report and summary.json.
#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "cache_report_util.h"
#include "dlio/config.h"
#include "dlio/runner.h"
#include "pfw_events.h"
#include "test_util.h"

namespace dlio {
namespace {

WorkloadConfig TieredRun(const testing::TempDir& dir, const std::string& policy) {
  auto c = ParseConfig(R"(
workflow: {generate_data: true, train: true}
dataset: {format: npz, num_files_train: 8, num_samples_per_file: 1, record_length_bytes: 65536}
reader: {batch_size: 2, read_threads: 2, file_shuffle: seed, sample_shuffle: seed}
train: {epochs: 3, computation_time: 0}
storage:
  storage_type: tiered
  tiered_source: slow
  slow_latency_us: 2000
  slow_bandwidth_mib_s: 200
)",
                       "run.yaml");
  REQUIRE(c.ok());
  c->dataset.data_folder = dir / "data";
  c->output.folder = dir / "out";
  REQUIRE(ApplyOverride(&*c, "storage.cache_policy=" + policy).ok());
  CacheTierOptions memory;
  memory.capacity_bytes = 4 << 20;
  CacheTierOptions local;
  local.type = CacheTierType::kDirectory;
  local.path = dir / "tier";
  local.capacity_bytes = 4 << 20;
  c->storage.backends.Get<TieredOptions>().tiers = {memory, local};
  return std::move(c).value();
}

TEST_CASE("tiered run: later epochs are served by the cache, stats in summary.json") {
  for (const std::string policy : {"monarch", "lru", "clairvoyant"}) {
    CAPTURE(policy);
    testing::TempDir dir;
    auto report = RunWorkload(TieredRun(dir, policy), RunEnv());
    INFO(report.status().ToString());
    REQUIRE(report.ok());
    REQUIRE(report->epochs.size() == 3);
    for (size_t e = 1; e < 3; ++e) {
      const auto levels = testing::CacheLevelsOf(report->epochs[e]);
      REQUIRE(levels.size() == 3);  // memory, directory, source
      CHECK(levels[0].hits + levels[1].hits > 0);
    }
    const auto last = testing::CacheLevelsOf(report->epochs[2]);
    if (policy == "lru") {
      // Epoch 1 waits for the slow source (8 files, 2 ms or more each, 2 readers); epoch 2
      // reads memory.
      const auto& e = report->epochs;
      CHECK(e[1].end_us - e[1].start_us < e[0].end_us - e[0].start_us);
      // Placed by the reader of each first open, and everything fits the memory tier: epochs 2
      // and 3 read nothing from the source. (monarch and clairvoyant copy in the background, so
      // how much is placed by epoch 2 depends on how the copy threads were scheduled.)
      CHECK(last[0].hits == 8);
      CHECK(last[2].hits == 0);
      CHECK(last[2].bytes_served == 0);
    }
    CHECK(last[0].peak_bytes <= last[0].capacity_bytes);
    const std::string summary = testing::ReadTextFile(dir / "out/summary.json");
    CHECK(summary.find("\"cache\"") != std::string::npos);
    CHECK(summary.find("\"policy\": \"" + policy + "\"") != std::string::npos);
  }
}

TEST_CASE("tiered run: files kept open across epochs are reopened, so later epochs hit") {
  testing::TempDir dir;
  WorkloadConfig c = TieredRun(dir, "lru");
  // The native npz reader keeps its file open, and the run keeps readers open across epochs
  // (reader.reopen_files_each_epoch false, 64 open files at most): the tiered storage makes the
  // run reopen them, or epochs 2 and 3 would keep reading the source through epoch 1's files.
  c.reader.io_model = IoModel::kNative;
  c.reader.reopen_files_each_epoch = false;
  auto report = RunWorkload(c, RunEnv());
  INFO(report.status().ToString());
  REQUIRE(report.ok());
  REQUIRE(report->epochs.size() == 3);
  for (size_t e = 1; e < 3; ++e) {
    CAPTURE(e);
    const auto levels = testing::CacheLevelsOf(report->epochs[e]);
    REQUIRE(levels.size() == 3);
    CHECK(levels[0].hits == 8);  // every file opened again, from memory
    CHECK(levels[2].bytes_served == 0);
  }
}

TEST_CASE("tiered run: each epoch's cache statistics are trace events, as in the report") {
  testing::TempDir dir;
  WorkloadConfig c = TieredRun(dir, "lru");
  c.output.trace = true;
  auto report = RunWorkload(c, RunEnv());
  INFO(report.status().ToString());
  REQUIRE(report.ok());
  REQUIRE(report->epochs.size() == 3);
  // (counter, epoch, level offset) -> value, from trace-0.pfw's cache.epoch.* events.
  std::map<std::tuple<std::string, int64_t, int64_t>, int64_t> traced;
  std::map<int64_t, std::string> level_names;
  for (const auto& e : testing::ReadPfwEvents(dir / "out/trace-0-of-1.pfw")) {
    const std::string name = e.value("name", "");
    if (name.rfind("cache.epoch.", 0) != 0) continue;
    CHECK(e.value("cat", "") == "cache");
    const auto& args = e["args"];
    const int64_t level = args.value("offset", int64_t{-1});
    traced[{name, args.value("epoch", int64_t{-1}), level}] = args.value("count", int64_t{-1});
    level_names[level] = args.value("fname", "");
  }
  for (size_t e = 0; e < 3; ++e) {
    CAPTURE(e);
    const auto levels = testing::CacheLevelsOf(report->epochs[e]);
    REQUIRE(levels.size() == 3);
    for (int64_t level : {int64_t{0}, int64_t{1}, int64_t{-1}}) {
      CAPTURE(level);
      const CacheTierStats& stats = levels[level < 0 ? 2 : level];
      CHECK(level_names[level] == stats.name);
      const int64_t epoch = static_cast<int64_t>(report->epochs[e].epoch);
      auto value = [&](const char* counter) {
        auto it = traced.find({std::string("cache.epoch.") + counter, epoch, level});
        return it == traced.end() ? int64_t{-1} : it->second;
      };
      CHECK(value("hits") == static_cast<int64_t>(stats.hits));
      CHECK(value("misses") == static_cast<int64_t>(stats.misses));
      CHECK(value("bytes_served") == static_cast<int64_t>(stats.bytes_served));
      CHECK(value("bytes_copied") == static_cast<int64_t>(stats.bytes_copied));
      CHECK(value("evictions") == static_cast<int64_t>(stats.evictions));
      CHECK(value("occupancy_bytes") == static_cast<int64_t>(stats.occupancy_bytes));
    }
  }
  // lru over a memory tier holding every file: epoch 1 misses all 8, later epochs hit all 8.
  CHECK(traced[{"cache.epoch.hits", 2, 0}] == 8);
}

}  // namespace
}  // namespace dlio
