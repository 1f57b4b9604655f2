// storage.cache_scope node under mpiexec: the ranks of a node share one cache (no file copied
// twice a node); process scope copies a file once per rank that reads it.
#include <catch2/catch.hpp>

#include "cache_report_util.h"
#include "dlio/config.h"
#include "dlio/runner.h"
#include "mpi_test_util.h"

namespace dlio {
namespace {

using testing::MpiTestComm;

constexpr uint64_t kFiles = 16;
constexpr uint64_t kSamplesPerFile = 2;
constexpr uint64_t kEpochs = 3;

WorkloadConfig Run(const std::string& dir, const std::string& scope, bool directory_tier) {
  auto c = ParseConfig(R"(
workflow: {generate_data: true, train: true}
dataset: {format: npz, num_files_train: 16, num_samples_per_file: 2, record_length_bytes: 32768}
reader: {batch_size: 2, read_threads: 2, file_shuffle: seed, sample_shuffle: seed}
train: {epochs: 3, computation_time: 0}
storage: {storage_type: tiered, tiered_source: posix, cache_policy: lru}
)",
                       "run.yaml");
  REQUIRE(c.ok());
  c->dataset.data_folder = dir + "/data";
  c->output.folder = dir + "/out-" + scope;
  REQUIRE(ApplyOverride(&*c, "storage.cache_scope=" + scope).ok());
  std::vector<CacheTierOptions>& tiers = c->storage.backends.Get<TieredOptions>().tiers;
  CacheTierOptions memory;
  memory.capacity_bytes = 64 << 20;
  tiers = {memory};
  if (directory_tier) {
    CacheTierOptions local;
    local.type = CacheTierType::kDirectory;
    local.path = dir + "/tier";
    local.capacity_bytes = 64 << 20;
    tiers.push_back(local);
  }
  return std::move(c).value();
}

RunEnv Env() {
  RunEnv env;
  env.comm = MpiTestComm();
  env.abort_on_error = false;
  return env;
}

// The counter of every epoch and level, summed over the epochs, then over the ranks.
double SumOverRanks(const RunReport& r, uint64_t CacheTierStats::*field, bool tiers_only) {
  std::vector<double> v{0};
  for (const EpochReport& e : r.epochs) {
    const std::vector<CacheTierStats> levels = testing::CacheLevelsOf(e);
    for (size_t l = 0; l < levels.size(); ++l) {
      if (tiers_only && l + 1 == levels.size()) continue;  // the source, last
      v[0] += static_cast<double>(levels[l].*field);
    }
  }
  REQUIRE(MpiTestComm()->AllReduceSum(&v).ok());
  return v[0];
}

double SamplesOverRanks(const RunReport& r, size_t epoch) {
  std::vector<double> v{0};
  for (const StepRecord& s : r.epochs[epoch].steps) v[0] += static_cast<double>(s.samples);
  REQUIRE(MpiTestComm()->AllReduceSum(&v).ok());
  return v[0];
}

TEST_CASE("node scope: the ranks of a node share one cache, no file is copied twice") {
  testing::SharedTempDir dir;
  auto report = RunWorkload(Run(dir.path(), "node", true), Env());
  INFO(report.status().ToString());
  REQUIRE(report.ok());
  REQUIRE(report->epochs.size() == kEpochs);
  // The node's first rank (rank 0 on one node) reports the node's cache; the others none.
  const bool leader = MpiTestComm()->rank() == 0;
  CHECK(testing::CacheLevelsOf(report->epochs[0]).empty() == !leader);
  CHECK(SumOverRanks(*report, &CacheTierStats::files_copied, true) == kFiles);
  // Every open of every rank was counted by the one cache: a miss of each file once, hits after.
  const double opens = SumOverRanks(*report, &CacheTierStats::hits, false);
  CHECK(SumOverRanks(*report, &CacheTierStats::read_through, true) == kFiles);
  CHECK(opens >= kFiles * kEpochs);
  for (size_t e = 0; e < kEpochs; ++e)
    CHECK(SamplesOverRanks(*report, e) == kFiles * kSamplesPerFile);
  if (leader) {
    // Each epoch's counters hold exactly that epoch's opens: the first's are all misses.
    const auto first = testing::CacheLevelsOf(report->epochs[0]);
    CHECK(first[0].misses == first[0].read_through);
    CHECK(first[0].misses + first[0].hits == first.back().hits + first[0].hits);
    const auto last = testing::CacheLevelsOf(report->epochs.back());
    CHECK(last[0].bytes_served > 0);           // the ranks' reads of the memory copies
    CHECK(last.back().hits == 0);              // the source, after epoch 1
    CHECK(last[0].occupancy_files >= kFiles);  // the data files (and files read before training)
  }
}

TEST_CASE("process scope: each rank copies what it reads (up to one copy per rank)") {
  testing::SharedTempDir dir;
  auto report = RunWorkload(Run(dir.path(), "process", false), Env());
  INFO(report.status().ToString());
  REQUIRE(report.ok());
  const double copied = SumOverRanks(*report, &CacheTierStats::files_copied, true);
  CHECK(copied > kFiles);
  CHECK(copied <= kFiles * MpiTestComm()->size());
  for (size_t e = 0; e < kEpochs; ++e)
    CHECK(SamplesOverRanks(*report, e) == kFiles * kSamplesPerFile);
}

TEST_CASE("node scope: a leader that cannot start its server fails every rank, naming why") {
  testing::SharedTempDir dir;
  WorkloadConfig c = Run(dir.path(), "node", true);
  if (MpiTestComm()->rank() == 0) testing::WriteTextFile(dir.path() + "/tier", "not a folder");
  REQUIRE(MpiTestComm()->Barrier().ok());
  auto report = RunWorkload(c, Env());
  REQUIRE_FALSE(report.ok());
  CHECK_THAT(report.status().message(), Catch::Contains("cache server of this node"));
  CHECK_THAT(report.status().message(), Catch::Contains("storage.tiers[1].path"));
}

}  // namespace
}  // namespace dlio
