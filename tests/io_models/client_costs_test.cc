// reader.client_costs: what a framework model's client pays must not change what the storage sees.
// dlio-run reads the same generated files twice, with client_costs none and framework, traced;
// every process of the run (the rank, each pytorch worker by number) must make the same opens,
// reads (offsets and sizes), closes and stats of the data files, in the same order.
#include <sys/resource.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "request_log.h"
#include "test_util.h"

namespace dlio {
namespace {

using io_model_test::Request;
using testing::RunCommand;

const io_model_test::KindFilter kFileCalls{
    {OpKind::kOpen, OpKind::kRead, OpKind::kClose, OpKind::kStat}};

using dlio::testing::DlioRun;

// The data files' requests of each process of a traced run ("rank", "worker <n>").
std::map<std::string, std::vector<Request>> RequestsByProcess(const std::string& out,
                                                              const std::string& train) {
  static const std::regex kWorker(R"(trace-0-of-1-worker-(\d+)-\d+\.pfw)");
  std::map<std::string, std::vector<Request>> by_process;
  for (const auto& e : std::filesystem::directory_iterator(out)) {
    const std::string name = e.path().filename().string();
    std::smatch m;
    std::string process;
    if (name == "trace-0-of-1.pfw") process = "rank";
    if (std::regex_match(name, m, kWorker)) process = "worker " + m[1].str();
    if (process.empty()) continue;
    ProfileTrace trace;
    REQUIRE(ImportPfw(e.path().string(), &trace).ok());
    std::vector<Request> rows = io_model_test::RequestsOf(trace, train, kFileCalls);
    for (Request& r : rows) r.pid = r.tid = 0;
    by_process[process] = std::move(rows);
  }
  return by_process;
}

TEST_CASE("client_costs none and framework: the same requests from every process") {
  // format, samples per file, extra settings.
  const auto [format, samples, extra] = GENERATE(table<std::string, int, std::string>({
      {"npz", 1, " --set reader.data_loader=pytorch --set reader.read_threads=2"},
      {"npz", 3, " --set reader.data_loader=pytorch --set reader.read_threads=2"},
      // Samples larger than a worker's bounded read buffer under none (4 KiB + its 1 MiB ring).
      {"npz", 1,
       " --set reader.data_loader=pytorch --set reader.read_threads=2"
       " --set dataset.record_length_bytes=1500000"},
      {"npy", 2, " --set reader.data_loader=pytorch --set reader.read_threads=2"},
      {"hdf5", 2, " --set reader.data_loader=pytorch --set reader.read_threads=2"},
      // The threaded loader with one reader thread (a deterministic order) over the numpy model.
      {"npz", 3, " --set reader.io_model=numpy --set reader.read_threads=1"},
  }));
  testing::TempDir tmp;
  const std::string common =
      " --quiet --set dataset.data_folder=" + tmp / "data" + " --set dataset.format=" + format +
      " --set dataset.num_files_train=8 --set dataset.num_samples_per_file=" +
      std::to_string(samples) +
      " --set dataset.record_length_bytes=300000 --set dataset.record_length_bytes_resize=4096"
      " --set reader.batch_size=2 --set reader.file_shuffle=off --set reader.sample_shuffle=off"
      " --set train.epochs=2 --set train.computation_time=0 --set workflow.checkpoint=false"
      " --set output.progress=false";
  const auto gen = RunCommand(DlioRun() + common + extra + " --set output.folder=" + tmp / "gen" +
                              " --generate --no-train");
  INFO(gen.output);
  REQUIRE(gen.exit_code == 0);
  const std::string train = tmp / "data/train";
  std::map<std::string, std::map<std::string, std::vector<Request>>> by_costs;
  for (const std::string costs : {"none", "framework"}) {
    const std::string out = tmp / ("out-" + costs);
    const auto run =
        RunCommand(DlioRun() + common + extra + " --no-generate --set output.folder=" + out +
                   " --set output.trace=true --set reader.client_costs=" + costs);
    INFO(run.output);
    REQUIRE(run.exit_code == 0);
    by_costs[costs] = RequestsByProcess(out, train);
  }
  const auto& none = by_costs["none"];
  const auto& framework = by_costs["framework"];
  REQUIRE(none.size() == framework.size());
  size_t reads = 0;
  for (const auto& [process, rows] : framework) {
    INFO(
        format << " x" << samples << extra << ", " << process << "\nframework:\n"
               << io_model_test::ToString(rows) << "none:\n"
               << (none.count(process) ? io_model_test::ToString(none.at(process)) : "(no trace)"));
    REQUIRE(none.count(process) == 1);
    CHECK(none.at(process) == rows);
    for (const Request& r : rows) reads += r.kind == OpKind::kRead;
  }
  CHECK(reads >= 2 * 8 * static_cast<size_t>(samples));  // every sample read in both epochs
}

// Minor page faults of this process's waited-for children so far (RunCommand's shell, and through
// it dlio-run and its pytorch workers).
long ChildFaults() {
  rusage u{};
  getrusage(RUSAGE_CHILDREN, &u);
  return u.ru_minflt;
}

TEST_CASE("reader.fresh_page_share: the reads fault in the share, the requests unchanged") {
  // 16 files of 1 MiB read twice: 8192 pages of reads of 1 MiB. Faults are counts, not times.
  // One reader thread (private memory), or two pytorch worker processes (their read buffers are
  // shared memory), each with a trace of its own: the order of each process's requests is fixed.
  const std::string loader = GENERATE(std::string(" --set reader.read_threads=1"),
                                      std::string(" --set reader.data_loader=pytorch"
                                                  " --set reader.loader=pytorch_workers"
                                                  " --set reader.read_threads=2"));
  testing::TempDir tmp;
  const std::string common =
      " --quiet --set dataset.data_folder=" + tmp / "data" +
      " --set dataset.format=npy --set dataset.num_files_train=16"
      " --set dataset.num_samples_per_file=1 --set dataset.record_length_bytes=1048576"
      " --set reader.io_model=native --set reader.batch_size=2 --set reader.file_shuffle=off"
      " --set reader.sample_shuffle=off --set train.epochs=2 --set train.computation_time=0"
      " --set workflow.checkpoint=false --set output.progress=false" +
      loader;
  const auto gen = RunCommand(DlioRun() + common + " --set output.folder=" + tmp / "gen" +
                              " --generate --no-train");
  INFO(gen.output);
  REQUIRE(gen.exit_code == 0);
  std::map<std::string, std::map<std::string, std::vector<Request>>> by_share;
  std::map<std::string, long> faults;
  for (const std::string share : {"0", "1", "0.5"}) {
    const std::string out = tmp / ("out-" + share);
    const long before = ChildFaults();
    const auto run = RunCommand(DlioRun() + common + " --no-generate --set output.folder=" + out +
                                " --set output.trace=true --set reader.fresh_page_share=" + share);
    faults[share] = ChildFaults() - before;
    INFO(run.output);
    REQUIRE(run.exit_code == 0);
    by_share[share] = RequestsByProcess(out, tmp / "data/train");
  }
  INFO(loader << ": faults at 0, 0.5, 1: " << faults["0"] << ", " << faults["0.5"] << ", "
              << faults["1"]);
  // Every page of the 8192 the reads fill faults at 1, about half at 0.5 (the run's start-up
  // faults alike in each run, within a few hundred).
  CHECK(faults["1"] - faults["0"] >= 7000);
  CHECK(faults["0.5"] - faults["0"] >= 3000);
  CHECK(faults["0.5"] - faults["0"] <= 5200);
  for (const std::string share : {"0.5", "1"}) {
    for (const auto& [process, rows] : by_share["0"]) {
      INFO("share " << share << ", " << process << ", at 0:\n"
                    << io_model_test::ToString(rows) << "at " << share << ":\n"
                    << io_model_test::ToString(by_share[share][process]));
      CHECK(by_share[share][process] == rows);
    }
    CHECK(by_share[share].size() == by_share["0"].size());
  }
}

}  // namespace
}  // namespace dlio
