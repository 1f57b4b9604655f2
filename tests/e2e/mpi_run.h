// Helpers of the tests that run dlio-run under mpiexec (dlio_run_mpi_test.cc,
// dlio_run_mpi_storage_test.cc): the launcher with a hang guard, the tiny workload's arguments,
// the run's folders, and what a rank's trace says it read.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "pfw_events.h"
#include "test_util.h"

namespace dlio::testing::mpi_e2e {

using json = nlohmann::json;

struct Timed {
  CommandResult result;
  double seconds = 0;
};

// `timeout` guards the test against a hang of the launcher itself (ctest's TIMEOUT is the
// backstop); a hung job shows as exit code 124.
inline Timed Launch(const std::string& command) {
  const auto t0 = std::chrono::steady_clock::now();
  Timed t;
  t.result = RunCommand("timeout 90 " + command);
  t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return t;
}

// Rank r's trace among `ranks`, under the run's output folder "out".
inline std::string TraceOf(int r, int ranks) {
  return "out/trace-" + std::to_string(r) + "-of-" + std::to_string(ranks) + ".pfw";
}

inline Timed MpiRun(int ranks, const std::string& args) {
  return Launch(std::string(DLIO_MPIEXEC) + " -n " + std::to_string(ranks) + " " + DlioRun() + " " +
                args);
}

inline std::string Folders(const TempDir& dir) {
  return " --quiet --set dataset.data_folder=" + dir / "data" +
         " --set output.folder=" + dir / "out" +
         " --set checkpoint.checkpoint_folder=" + dir / "ckpt";
}

// 6 files x 2 samples x 16 KiB, batch 2, 2 epochs: generate, then train.
inline std::string TinyArgs(const TempDir& dir) {
  return Folders(dir) +
         " --set dataset.num_files_train=6 --set dataset.num_samples_per_file=2"
         " --set dataset.record_length_bytes=16384 --set reader.batch_size=2"
         " --set train.epochs=2 --set train.computation_time=0.0005";
}

inline json LoadJson(const std::string& path) { return json::parse(ReadTextFile(path)); }

// (epoch, file, sample index) of every sample a rank's pipeline read, from its trace.
using Item = std::tuple<int64_t, std::string, int64_t>;
inline std::vector<Item> SamplesRead(const std::string& trace) {
  std::vector<Item> items;
  for (const json& e : ReadPfwEvents(trace)) {
    if (e.value("name", "") != "item") continue;
    const json& a = e["args"];
    items.emplace_back(a["epoch"].get<int64_t>(), a["fname"].get<std::string>(),
                       a["index"].get<int64_t>());
  }
  return items;
}

inline size_t Count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t pos = haystack.find(needle); pos != std::string::npos;
       pos = haystack.find(needle, pos + 1)) {
    ++n;
  }
  return n;
}

}  // namespace dlio::testing::mpi_e2e
