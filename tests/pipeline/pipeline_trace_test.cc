// What the pipelines record in the trace (events, their clock) and the priority of their read
// threads.
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "dlio/pipeline.h"
#include "dlio/tracer.h"
#include "fake_clock.h"
#include "pipeline/fake_source.h"
#include "pipeline/pipeline_test_util.h"

namespace dlio {
namespace {

TEST_CASE("tracing records fetch, item and preprocess events") {
  testing::FakeSource source(2, 6);
  auto tracer = std::make_unique<MemoryTracer>();
  PipelineOptions options;
  options.batch_size = 4;
  options.read_threads = 2;
  options.computation_threads = 2;
  options.drop_last = false;
  options.preprocess_time = testing::Constant(1e-5);
  auto pipeline = testing::Make("threaded", options, &source, tracer.get());
  auto plan = testing::MakePlan(source, 0);
  REQUIRE(pipeline->StartEpoch(3, plan).ok());
  testing::DrainAndCheck(pipeline.get(), source, 3, plan, 4, false);
  REQUIRE(pipeline->Stop().ok());
  int fetch = 0, item = 0, preprocess = 0;
  std::set<int64_t> steps;
  for (const TraceEvent& e : tracer->Events()) {
    const std::string name = e.name;
    if (name == "fetch.iter") {
      ++fetch;
      CHECK(std::string(e.cat) == "dataloader");
      CHECK(e.epoch == 4);  // StartEpoch(3): the fourth epoch; traces count from 1
      steps.insert(e.step);
    } else if (name == "item") {
      ++item;
      CHECK(e.epoch == 4);  // StartEpoch(3): the fourth epoch; traces count from 1
      CHECK_THAT(tracer->FileName(e.file_id), Catch::Contains("file_"));
      CHECK(e.ret >= 16);  // the sample's size
    } else if (name == "preprocess") {
      ++preprocess;
      CHECK(e.dur_us >= 5);
    }
  }
  CHECK(fetch == 3);
  CHECK(steps == std::set<int64_t>{1, 2, 3});  // batches 0, 1, 2: steps count from 1
  CHECK(item == 12);
  CHECK(preprocess == 12);
}

TEST_CASE("trace times come from the injected clock, wall time included") {
  const std::string name = GENERATE(as<std::string>{}, "threaded", "sync", "preload");
  CAPTURE(name);
  testing::FakeSource source(2, 4);
  MemoryTracer tracer;
  const int64_t wall_origin_us = 5'000'000;  // 1970: no real clock says this
  testing::FakeClock clock(0, wall_origin_us);
  PipelineOptions options;
  options.batch_size = 2;
  options.read_threads = 0;  // everything on this thread: the fake clock moves only here
  options.computation_threads = 0;
  options.preprocess_time = testing::Constant(1e-3);  // each sample sleeps 1 ms of fake time
  auto pipeline = testing::Make(name, options, &source, &tracer, &clock);
  auto plan = testing::MakePlan(source, 0);
  REQUIRE(pipeline->StartEpoch(1, plan).ok());
  testing::DrainAndCheck(pipeline.get(), source, 1, plan, 2, true);
  REQUIRE(pipeline->Stop().ok());
  const int64_t end_us = clock.WallMicros();
  CHECK(end_us == wall_origin_us + 8 * 1000);
  std::map<std::string, int> counts;
  for (const TraceEvent& e : tracer.Events()) {
    CAPTURE(e.name);
    ++counts[e.name];
    CHECK(e.start_us >= wall_origin_us);
    CHECK(e.start_us + e.dur_us <= end_us);
    if (std::string(e.name) == "preprocess") CHECK(e.dur_us == 1000);
  }
  CHECK(counts["item"] == 8);
  CHECK(counts["preprocess"] == 8);
  CHECK(counts["fetch.iter"] == 4);
}

// Each read takes 10 ns x (index + 1) + 1000 ns x file of the fake clock, nothing else moves it.
class ClockedSource final : public testing::FakeSource {
 public:
  explicit ClockedSource(const testing::FakeClock* clock) : FakeSource(2, 4, 64), clock_(clock) {}
  Status Read(SampleRef ref, SampleBuffer* out) override {
    clock_->Advance(10 * static_cast<int64_t>(ref.index + 1) + 1000 * ref.file);
    return FakeSource::Read(ref, out);
  }

 private:
  const testing::FakeClock* clock_;
};

TEST_CASE("a batch's read time is the same whether its samples are timed one by one or as a run") {
  // Untraced, with nothing between reads, a reader times its run of a batch's samples once
  // (BatchPipeline::time_runs_); traced, each sample. The batch's read_ns must not change.
  const bool traced = GENERATE(false, true);
  const uint64_t read_threads = GENERATE(0, 1);
  CAPTURE(traced, read_threads);
  testing::FakeClock clock;
  ClockedSource source(&clock);
  MemoryTracer tracer;
  PipelineOptions options;
  options.batch_size = 4;
  options.read_threads = read_threads;
  options.computation_threads = 0;
  auto pipeline = testing::Make("threaded", options, &source, traced ? &tracer : nullptr, &clock);
  REQUIRE(pipeline->StartEpoch(0, testing::MakePlan(source, 0)).ok());
  std::vector<int64_t> read_ns;
  uint64_t bytes = 0;
  BatchLease lease;
  bool end = false;
  while (true) {
    REQUIRE(pipeline->Next(&lease, &end).ok());
    if (end) break;
    read_ns.push_back(lease->read_ns);
    bytes += lease->bytes;
    lease.reset();
  }
  REQUIRE(pipeline->Stop().ok());
  // File 0's samples 0-3: 10 + 20 + 30 + 40 ns; file 1's: 4 x 1000 ns more.
  CHECK(read_ns == std::vector<int64_t>{100, 4100});
  CHECK(bytes == 8 * 64);
  CHECK(pipeline->stats().samples_read == 8);
}

// Records the nice value of every thread that reads.
class NiceRecordingSource final : public testing::FakeSource {
 public:
  using FakeSource::FakeSource;
  Status Read(SampleRef ref, SampleBuffer* out) override {
    const auto tid = static_cast<id_t>(::syscall(SYS_gettid));
    {
      std::lock_guard<std::mutex> lock(nice_mu_);
      nice_.insert(::getpriority(PRIO_PROCESS, tid));
    }
    return FakeSource::Read(ref, out);
  }
  std::set<int> nice() {
    std::lock_guard<std::mutex> lock(nice_mu_);
    return nice_;
  }

 private:
  std::mutex nice_mu_;
  std::set<int> nice_;
};

TEST_CASE("reader.thread_nice lowers the priority of the read threads only") {
  const int mine = ::getpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)));
  const int increment = GENERATE(0, 5);
  CAPTURE(increment);
  NiceRecordingSource source(4, 3, 64);
  PipelineOptions options;
  options.read_threads = 2;
  options.batch_size = 2;
  options.thread_nice = increment;
  auto pipeline = testing::Make("threaded", options, &source);
  REQUIRE(pipeline->StartEpoch(0, testing::MakePlan(source, 0)).ok());
  BatchLease lease;
  bool end = false;
  while (!end) REQUIRE(pipeline->Next(&lease, &end).ok());
  REQUIRE(pipeline->Stop().ok());
  CHECK(source.nice() == std::set<int>{std::min(19, mine + increment)});
  CHECK(::getpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid))) == mine);
}

}  // namespace
}  // namespace dlio
