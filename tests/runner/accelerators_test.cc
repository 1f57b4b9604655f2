// train.accelerators_per_process: K accelerator threads per process, each a rank. Which files each
// rank read comes from its trace (trace-<rank>-of-<ranks>.pfw, pid rank + 1), so the tests also
// check that the trace events carry the accelerator's rank. Real clock and posix files in a temp
// dir; the "processes" of the multi-process cases are threads over tests/runner/thread_comm.h (the
// MPI case is in tests/e2e/dlio_run_mpi_test.cc).
#include <catch2/catch.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "dlio/registries.h"
#include "dlio/runner.h"
#include "dlio/storage_wrapper.h"
#include "pfw_events.h"
#include "runner/thread_comm.h"
#include "storage/mpiio_options.h"
#include "test_util.h"

namespace {

using nlohmann::json;

constexpr int kFiles = 24;

dlio::WorkloadConfig BaseConfig(const dlio::testing::TempDir& dir) {
  dlio::WorkloadConfig c;
  c.storage.storage_type = "posix";
  c.dataset.data_folder = dir / "data";
  c.dataset.format = "npz";
  c.dataset.num_files_train = kFiles;
  c.dataset.num_samples_per_file = 1;
  c.dataset.record_length_bytes = 4096;
  c.dataset.record_length_bytes_stdev = 0;
  c.reader.batch_size = 1;
  c.reader.read_threads = 2;
  c.reader.sample_shuffle = dlio::ShuffleMode::kRandom;
  c.train.epochs = 2;
  c.train.computation_time.mean = 0.001;
  c.train.excluded_start_steps = 0;
  c.workflow.checkpoint = false;
  c.output.progress = false;
  return c;
}

// Writes the dataset once (one rank, no trace), so that the training runs' traces hold reads only.
void Generate(const dlio::testing::TempDir& dir) {
  dlio::WorkloadConfig c = BaseConfig(dir);
  c.workflow.generate_data = true;
  c.workflow.train = false;
  c.output.folder = dir / "generate";
  auto report = dlio::RunWorkload(c, dlio::RunEnv());
  INFO(report.status().ToString());
  REQUIRE(report.ok());
}

// The files rank `rank` opened, from its trace, with how often; every event must carry its pid.
std::map<std::string, int> OpenedBy(const std::string& folder, int rank, int world) {
  std::map<std::string, int> opened;
  for (const json& e : dlio::testing::ReadPfwEvents(folder + "/trace-" + std::to_string(rank) +
                                                    "-of-" + std::to_string(world) + ".pfw")) {
    CHECK(e.value("pid", -1) == rank + 1);
    if (e.value("name", "") == "open64") ++opened[e["args"].value("fname", "")];
  }
  return opened;
}

// For each rank of a world of `world`, the files it opened.
std::vector<std::map<std::string, int>> Coverage(const std::string& folder, int world) {
  std::vector<std::map<std::string, int>> out;
  for (int r = 0; r < world; ++r) out.push_back(OpenedBy(folder, r, world));
  return out;
}

// Runs `processes` processes (threads over a ThreadCommHub) of `per_process` accelerators each.
std::vector<dlio::Result<dlio::RunReport>> RunProcesses(const dlio::WorkloadConfig& config,
                                                        int processes) {
  dlio::testing::ThreadCommHub hub(processes);
  std::vector<std::unique_ptr<dlio::Comm>> comms;
  for (int p = 0; p < processes; ++p) comms.push_back(hub.Rank(p));
  std::vector<dlio::Result<dlio::RunReport>> reports(processes, dlio::Status::Internal("not run"));
  std::vector<std::thread> threads;
  for (int p = 0; p < processes; ++p) {
    threads.emplace_back([&, p] {
      dlio::RunEnv env;
      env.comm = comms[p].get();
      reports[p] = dlio::RunWorkload(config, env);
    });
  }
  for (auto& t : threads) t.join();
  return reports;
}

// Opens for reading of any path containing `needle` fail, once armed.
class FailingStorage final : public dlio::StorageWrapper {
 public:
  FailingStorage(std::unique_ptr<dlio::Storage> inner, std::string needle)
      : StorageWrapper("failing", std::move(inner)), needle_(std::move(needle)) {}
  bool armed = false;

 protected:
  dlio::Result<std::unique_ptr<dlio::File>> DoOpen(const std::string& path, dlio::OpenMode mode,
                                                   const dlio::FileOptions& options) override {
    if (armed && mode == dlio::OpenMode::kRead && path.find(needle_) != std::string::npos) {
      return dlio::Status::IOError(path, ": injected read failure");
    }
    return StorageWrapper::DoOpen(path, mode, options);
  }

 private:
  const std::string needle_;
};

}  // namespace

TEST_CASE("accelerators_per_process 4: every sample once per epoch, one accelerator each") {
  dlio::testing::TempDir dir;
  Generate(dir);
  dlio::WorkloadConfig c = BaseConfig(dir);
  c.train.accelerators_per_process = 4;
  c.output.folder = dir / "k4";
  c.output.trace = true;
  auto report = dlio::RunWorkload(c, dlio::RunEnv());
  INFO(report.status().ToString());
  REQUIRE(report.ok());
  CHECK(report->rank == 0);
  CHECK(report->world == 4);
  REQUIRE(report->epochs.size() == 2);
  for (const auto& e : report->epochs) CHECK(e.metrics.samples == kFiles / 4);

  // Each rank reads its own shard (6 files per epoch); over 2 epochs every file is read twice.
  std::map<std::string, int> total;
  for (const auto& opened : Coverage(c.output.folder, 4)) {
    int n = 0;
    for (const auto& [file, count] : opened) {
      n += count;
      total[file] += count;
    }
    CHECK(n == 2 * kFiles / 4);
  }
  CHECK(total.size() == kFiles);
  for (const auto& [file, count] : total) {
    CAPTURE(file);
    CHECK(count == 2);
  }

  const json s = json::parse(report->summary_json);
  CHECK(s["num_accelerators"] == 4);
  CHECK(s["accelerators_per_process"] == 4);
  CHECK(s["num_processes"] == 1);
  REQUIRE(s["ranks"].size() == 4);
  const json& m = s["metric"];
  double lowest = 1e9;
  for (int r = 0; r < 4; ++r) {
    CHECK(s["ranks"][r]["rank"] == r);
    CHECK(s["ranks"][r]["samples"] == json::array({kFiles / 4, kFiles / 4}));
    lowest = std::min(lowest, s["ranks"][r]["au_percentage"][0].get<double>());
  }
  CHECK(m["train_au_min_accelerator_percentage"][0].get<double>() == Approx(lowest));
  CHECK(m["train_throughput_per_accelerator_mean_samples_per_second"].get<double>() ==
        Approx(m["train_throughput_mean_samples_per_second"].get<double>() / 4));
  CHECK(m["train_throughput_per_accelerator_samples_per_second"][1].get<double>() ==
        Approx(m["train_throughput_samples_per_second"][1].get<double>() / 4));
  CHECK(report->summary_text.find("4 ranks (1 process x 4 accelerator threads)") !=
        std::string::npos);
}

TEST_CASE("2 processes x 2 accelerators read what 4 plain ranks read, rank for rank") {
  dlio::testing::TempDir dir;
  Generate(dir);
  dlio::WorkloadConfig c = BaseConfig(dir);
  c.output.trace = true;
  c.output.folder = dir / "plain";
  for (const auto& r : RunProcesses(c, 4)) REQUIRE(r.ok());
  c.output.folder = dir / "threads";
  c.train.accelerators_per_process = 2;
  auto reports = RunProcesses(c, 2);
  for (const auto& r : reports) {
    INFO(r.status().ToString());
    REQUIRE(r.ok());
  }
  CHECK(reports[0]->rank == 0);
  CHECK(reports[1]->rank == 2);  // each process returns its first accelerator's report
  CHECK(reports[1]->world == 4);
  const auto plain = Coverage(dir / "plain", 4);
  const auto threads = Coverage(dir / "threads", 4);
  for (int r = 0; r < 4; ++r) {
    CAPTURE(r);
    CHECK(plain[r].size() > 0);
    CHECK(threads[r] == plain[r]);
  }
  const json s = json::parse(reports[0]->summary_json);
  CHECK(s["num_accelerators"] == 4);
  CHECK(s["accelerators_per_process"] == 2);
  CHECK(s["num_processes"] == 2);
}

TEST_CASE("the accelerator threads of a process share its in-memory storage") {
  // storage_type memory with no RunEnv::storage: generated by the 4 threads' split and read by
  // their shards, so all must see one dataset; each thread still counts its own reads.
  dlio::testing::TempDir dir;
  dlio::WorkloadConfig c = BaseConfig(dir);
  c.storage.storage_type = "memory";
  c.dataset.data_folder = "/data";
  c.output.folder = dir / "out";
  c.workflow.generate_data = true;
  c.train.accelerators_per_process = 4;
  auto report = dlio::RunWorkload(c, dlio::RunEnv());
  INFO(report.status().ToString());
  REQUIRE(report.ok());
  for (const auto& e : report->epochs) CHECK(e.metrics.samples == kFiles / 4);
  const json s = json::parse(report->summary_json);
  CHECK(s["generate"]["files_written"] == kFiles);
  uint64_t reads = 0;
  for (const json& r : s["ranks"]) {
    CHECK(r["read_ops"].get<uint64_t>() > 0);
    CHECK(r["files_generated"] == kFiles / 4);
    reads += r["read_ops"].get<uint64_t>();
  }
  CHECK(s["io"]["read_ops"] == reads);
}

TEST_CASE("an error in one accelerator thread ends the run with that error, without a hang") {
  dlio::testing::TempDir dir;
  dlio::Registries registries;
  REQUIRE(dlio::RegisterBuiltins(&registries).ok());
  FailingStorage storage(dlio::NewMemoryStorage(), "img_05_of_24");
  dlio::WorkloadConfig c = BaseConfig(dir);
  c.storage.storage_type = "memory";
  c.dataset.data_folder = "/data";
  c.output.folder = dir / "out";
  c.workflow.generate_data = true;
  c.workflow.train = false;
  dlio::RunEnv env;
  env.registries = &registries;
  env.storage = &storage;
  REQUIRE(dlio::RunWorkload(c, env).ok());

  storage.armed = true;
  c.workflow.generate_data = false;
  c.workflow.train = true;
  c.train.accelerators_per_process = 6;
  c.train.epochs = 3;
  env.abort_on_error = GENERATE(true, false);
  CAPTURE(env.abort_on_error);
  const auto start = std::chrono::steady_clock::now();
  auto report = dlio::RunWorkload(c, env);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(30));
  REQUIRE(!report.ok());
  CHECK(report.status().code() == dlio::StatusCode::kIOError);
  CHECK(report.status().message().find("img_05_of_24") != std::string::npos);
  CHECK(report.status().message().find("injected read failure") != std::string::npos);
}

TEST_CASE("accelerators_per_process: the virtual world goes through the rank checks") {
  dlio::testing::TempDir dir;
  dlio::WorkloadConfig c = BaseConfig(dir);
  SECTION("0 is refused by the key's range") {
    c.train.accelerators_per_process = 0;
    const dlio::Status s = c.Validate();
    CHECK(s.code() == dlio::StatusCode::kInvalidArgument);
    CHECK(s.message().find("train.accelerators_per_process") != std::string::npos);
  }
  SECTION("train.barrier_wait is sleep or spin") {
    c.train.barrier_wait = static_cast<dlio::BarrierWait>(7);  // only a cast makes an unknown value
    const dlio::Status s = c.Validate();
    CHECK(s.code() == dlio::StatusCode::kInvalidArgument);
    CHECK(s.message().find("train.barrier_wait") != std::string::npos);
  }
  SECTION("more accelerators than samples: an epoch without a step, refused before running") {
    Generate(dir);
    c.train.accelerators_per_process = 32;  // 24 samples, batch 1, drop_last
    c.reader.drop_last = true;
    c.output.folder = dir / "k32";
    const dlio::Status s = dlio::PreflightRun(c, dlio::RunEnv());
    INFO(s.ToString());
    CHECK(s.code() == dlio::StatusCode::kInvalidArgument);
  }
  SECTION("collective MPI-IO cannot include accelerator threads") {
    c.storage.backends.Get<dlio::MpiioOptions>().collective = true;
    c.reader.pipeline = "sync";
    c.reader.read_threads = 1;
    c.reader.drop_last = true;
    c.dataset.num_files_train = 1;
    c.train.accelerators_per_process = 2;
    const dlio::Status s = c.Validate();
    CHECK(s.code() == dlio::StatusCode::kInvalidArgument);
    CHECK(s.message().find("train.accelerators_per_process") != std::string::npos);
  }
}
