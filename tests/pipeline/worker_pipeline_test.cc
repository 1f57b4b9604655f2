// The pytorch pipeline (worker processes, pipeline/worker_pipeline.h): order and bytes, whole
// batches per worker process, the prefetch_factor bound, persistent vs re-forked workers, errors
// in order, a killed worker, and an early Stop, all with no child process left behind. Its memory
// (regions, read buffers, the collate limit): worker_memory_test.cc.
#include "pipeline/worker_pipeline.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "dlio/pipeline.h"
#include "dlio/registries.h"
#include "dlio/tracer.h"
#include "pipeline/fake_source.h"
#include "pipeline/pytorch_options.h"
#include "pipeline/worker_channel.h"
#include "pipeline/worker_pipeline_test_util.h"
#include "test_util.h"

namespace dlio {
namespace {

using testing::FakeSource;
using worker_test::DrainChecked;
using worker_test::Fixture;
using worker_test::NoChildren;
using worker_test::Own;
using worker_test::PlanOf;

// The steps (batch k + 1) whose samples one worker trace shows read, with the sample count.
std::map<int64_t, int> StepsIn(const std::string& path, int* worker_pid, std::string* name,
                               std::set<int>* tids = nullptr) {
  std::ifstream in(path);
  std::string line;
  std::map<int64_t, int> steps;
  while (std::getline(in, line)) {
    if (line == "[" || line == "]" || line.empty()) continue;
    if (line.back() == ',') line.pop_back();
    const auto e = nlohmann::json::parse(line);
    if (e.value("ph", "") == "M" && e.value("name", "") == "process_name") {
      *worker_pid = e.value("pid", 0);
      *name = e["args"].value("name", "");
    }
    if (e.value("name", "") != "item") continue;
    ++steps[e["args"].value("step", int64_t{-1})];
    if (tids != nullptr) tids->insert(e.value("tid", 0));
  }
  return steps;
}

TEST_CASE("pytorch pipeline: batches in plan order with their bytes, whole batches per worker",
          "[pipeline][pytorch]") {
  const uint64_t workers = GENERATE(1, 2, 3);
  const uint64_t batch = GENERATE(1, 4);
  Fixture fx;
  FakeSource source(5, 7);  // 35 samples of varying sizes
  std::vector<SampleRef> plan = PlanOf(source);
  std::reverse(plan.begin(), plan.end());
  PipelineOptions o;
  o.batch_size = batch;
  o.read_threads = workers;
  o.prefetch_size = 2;
  auto p = fx.Make(o, &source);
  REQUIRE(p->StartEpoch(0, plan).ok());
  DrainChecked(p.get(), source, plan, batch);
  REQUIRE(p->Stop().ok());
  REQUIRE(NoChildren());

  const auto traces = fx.WorkerTraces();
  REQUIRE(traces.size() == workers);  // k distinct worker processes
  std::set<int64_t> all_steps;
  for (const auto& [pid, path] : traces) {
    int traced_pid = 0;
    std::string name;
    const auto steps = StepsIn(path, &traced_pid, &name);
    REQUIRE(traced_pid == pid);  // the OS pid, named first so trace-merge keeps it
    const std::regex worker_name(R"(dlio rank 0 worker (\d+))");
    std::smatch m;
    REQUIRE(std::regex_match(name, m, worker_name));
    const uint64_t w = std::stoull(m[1].str());
    for (const auto& [step, samples] : steps) {
      REQUIRE(static_cast<uint64_t>(step - 1) % workers == w);  // batch i by worker i % k
      REQUIRE(static_cast<uint64_t>(samples) == batch);         // the whole batch
      REQUIRE(all_steps.insert(step).second);
    }
  }
  REQUIRE(all_steps.size() == plan.size() / batch);
}

TEST_CASE("pytorch pipeline: prefetch_factor batches per worker, no more", "[pipeline][pytorch]") {
  const uint64_t workers = GENERATE(1, 2);
  const uint64_t prefetch_size = GENERATE(0, 2, 6);
  const uint64_t factor = PytorchPrefetchFactor(prefetch_size, workers);
  Fixture fx;
  FakeSource source(4, 16);
  PipelineOptions o;
  o.batch_size = 2;
  o.read_threads = workers;
  o.prefetch_size = prefetch_size;
  auto p = fx.Make(o, &source);
  REQUIRE(p->StartEpoch(0, PlanOf(source)).ok());
  // No Next: the workers read what they were sent, then wait.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  REQUIRE(p->Stop().ok());
  REQUIRE(NoChildren());
  std::set<int64_t> steps_read;
  for (const auto& [pid, path] : fx.WorkerTraces()) {
    int traced_pid = 0;
    std::string name;
    const auto steps = StepsIn(path, &traced_pid, &name);
    REQUIRE(steps.size() == factor);
    for (const auto& [step, n] : steps) steps_read.insert(step);
  }
  REQUIRE(steps_read.size() == factor * workers);
  REQUIRE(*steps_read.rbegin() == static_cast<int64_t>(factor * workers));
  CHECK(PytorchPrefetchFactor(0, 4) == 2);  // DLIO: prefetch_size 0 -> torch's default 2
  CHECK(PytorchPrefetchFactor(5, 2) == 3);  // ceil(prefetch_size / read_threads)
}

TEST_CASE("pytorch pipeline: workers re-forked every epoch unless persistent",
          "[pipeline][pytorch]") {
  const bool persistent = GENERATE(true, false);
  Fixture fx;
  FakeSource source(3, 8);
  const auto plan = PlanOf(source);
  PipelineOptions o;
  o.batch_size = 3;
  o.read_threads = 2;
  Own(o).persistent_workers = persistent;
  auto p = fx.Make(o, &source);
  for (uint64_t epoch = 0; epoch < 3; ++epoch) {
    REQUIRE(p->StartEpoch(epoch, plan).ok());
    DrainChecked(p.get(), source, plan, 3);
    // A DataLoader iterator ends its workers once exhausted (not persistent ones).
    REQUIRE(NoChildren() == !persistent);
  }
  REQUIRE(p->Stop().ok());
  REQUIRE(NoChildren());
  const auto traces = fx.WorkerTraces();
  REQUIRE(traces.size() == (persistent ? 2u : 6u));
  for (const auto& [pid, path] : traces) {
    // The worker's own thread id, even when the main process had traced (and cached its own
    // thread id) before forking it.
    int traced_pid = 0;
    std::string name;
    std::set<int> tids;
    StepsIn(path, &traced_pid, &name, &tids);
    REQUIRE(tids == std::set<int>{pid});
  }
}

TEST_CASE("pytorch pipeline: a worker's read error arrives in order, naming the file",
          "[pipeline][pytorch]") {
  Fixture fx;
  FakeSource source(4, 6);
  source.FailAt({2, 3});  // plan position 15: batch 3 with batch_size 4
  const auto plan = PlanOf(source);
  PipelineOptions o;
  o.batch_size = 4;
  o.read_threads = 2;
  auto p = fx.Make(o, &source);
  REQUIRE(p->StartEpoch(0, plan).ok());
  BatchLease lease;
  bool end = false;
  for (int k = 0; k < 3; ++k) {
    REQUIRE(p->Next(&lease, &end).ok());
    REQUIRE(lease->index == k);
  }
  Status st = p->Next(&lease, &end);
  REQUIRE(st.code() == StatusCode::kIOError);
  REQUIRE_THAT(st.message(), Catch::Contains("data/file_2.bin") &&
                                 Catch::Contains("injected failure") &&
                                 Catch::Contains("batch 3") && Catch::Contains("pytorch worker 1"));
  REQUIRE(p->Next(&lease, &end).code() == StatusCode::kIOError);  // sticky
  // The next epoch works again (the failure is gone from a fresh fork's copy only when cleared
  // before it; the persistent workers keep their copy, so read around it).
  std::vector<SampleRef> good(plan.begin(), plan.begin() + 12);
  REQUIRE(p->StartEpoch(1, good).ok());
  DrainChecked(p.get(), source, good, 4);
  REQUIRE(p->Stop().ok());
  REQUIRE(NoChildren());
}

TEST_CASE("pytorch pipeline: a killed worker is an error, not a hang", "[pipeline][pytorch]") {
  Fixture fx;
  FakeSource source(4, 8);
  source.set_delay_us(20000);
  PipelineOptions o;
  o.batch_size = 4;
  o.read_threads = 2;
  auto p = fx.Make(o, &source);
  REQUIRE(p->StartEpoch(0, PlanOf(source)).ok());
  const auto traces = fx.WaitForWorkers(2);
  REQUIRE(traces.size() == 2);
  for (const auto& [pid, path] : traces) REQUIRE(::kill(pid, SIGKILL) == 0);
  auto next = std::async(std::launch::async, [&] {
    BatchLease lease;
    bool end = false;
    return p->Next(&lease, &end);
  });
  REQUIRE(next.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
  const Status st = next.get();
  REQUIRE(st.code() == StatusCode::kIOError);
  REQUIRE_THAT(st.message(), Catch::Contains("killed by signal 9") && Catch::Contains("batch 0") &&
                                 Catch::Contains("data/file_0.bin"));
  // A new epoch forks new workers.
  source.set_delay_us(0);
  const auto plan = PlanOf(source);
  REQUIRE(p->StartEpoch(1, plan).ok());
  DrainChecked(p.get(), source, plan, 4);
  REQUIRE(p->Stop().ok());
  REQUIRE(NoChildren());
}

TEST_CASE("pytorch pipeline: Stop from another thread ends a blocked Next and every worker",
          "[pipeline][pytorch]") {
  Fixture fx;
  FakeSource source(2, 64);
  source.set_delay_us(200000);  // 0.2 s per sample: the prefetched batches would take seconds
  PipelineOptions o;
  o.batch_size = 8;
  o.read_threads = 2;
  o.prefetch_size = 4;
  auto p = fx.Make(o, &source);
  REQUIRE(p->StartEpoch(0, PlanOf(source)).ok());
  auto next = std::async(std::launch::async, [&] {
    BatchLease lease;
    bool end = false;
    return p->Next(&lease, &end);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const auto start = std::chrono::steady_clock::now();
  REQUIRE(p->Stop().ok());
  REQUIRE(next.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
  REQUIRE(next.get().code() == StatusCode::kCancelled);
  REQUIRE(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
  REQUIRE(NoChildren());
  REQUIRE(p->StartEpoch(1, PlanOf(source)).code() == StatusCode::kFailedPrecondition);
}

TEST_CASE("pytorch pipeline: read_threads 0 reads in the main process", "[pipeline][pytorch]") {
  Fixture fx;
  FakeSource source(3, 5);
  const auto plan = PlanOf(source);
  PipelineOptions o;
  o.batch_size = 2;
  o.read_threads = 0;
  auto p = fx.Make(o, &source);
  REQUIRE(p->StartEpoch(0, plan).ok());
  DrainChecked(p.get(), source, plan, 2);
  REQUIRE(source.reads() == 14);  // counted here: no fork
  REQUIRE(fx.WorkerTraces().empty());
}

}  // namespace
}  // namespace dlio
