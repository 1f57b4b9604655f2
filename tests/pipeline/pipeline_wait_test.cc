// The consumer's wait for its batch (BatchPipeline::AwaitBatch): a bounded poll before it sleeps
// on the condition variable (SpinBeforeSleep), so that no batch is lost or delivered twice
// whether it completes before Next, during the poll or after the consumer went to sleep.
#include <sched.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "dlio/pipeline.h"
#include "pipeline/batch_pipeline.h"
#include "pipeline/fake_source.h"
#include "pipeline/pipeline_test_util.h"
#include "pipeline/spin_wait.h"

namespace dlio {
namespace {

using pipeline_internal::SpinBeforeSleep;
using testing::Constant;
using testing::FakeSource;
using testing::MakePlan;
using Us = std::chrono::microseconds;

// A FakeSource whose reads last 0, 10 us, 0 or 300 us by sample index: the batch the consumer
// waits for is ready before it asks, during its poll, or long after it went to sleep.
class PacedSource : public FakeSource {
 public:
  using FakeSource::FakeSource;
  Status Read(SampleRef ref, SampleBuffer* out) override {
    static constexpr int64_t kReadUs[] = {0, 10, 0, 300};
    const int64_t us = kReadUs[ref.index % 4];
    if (us > 0) std::this_thread::sleep_for(Us(us));
    return FakeSource::Read(ref, out);
  }
};

// Drains one epoch with a consumer that asks for the next batch at once, after 20 us or after
// 400 us, in turn; returns the batch indexes it got, or stops the pipeline and fails if a
// batch never came within the (generous) deadline: a lost wake-up.
std::vector<int64_t> DrainPaced(Pipeline* pipeline, const FakeSource& source,
                                const std::vector<SampleRef>& plan) {
  auto drained = std::async(std::launch::async, [&] {
    std::vector<int64_t> got;
    BatchLease lease;
    bool end = false;
    for (int64_t step = 0;; ++step) {
      static constexpr int64_t kPauseUs[] = {0, 20, 0, 400, 0};
      const int64_t us = kPauseUs[step % 5];
      if (us > 0) std::this_thread::sleep_for(Us(us));
      if (!pipeline->Next(&lease, &end).ok() || end) break;
      const size_t k = static_cast<size_t>(lease->index);
      const bool right = k < plan.size() && lease->samples.size() == 1 &&
                         lease->samples[0].ref == plan[k] &&
                         source.Matches(plan[k], lease->samples[0].data, lease->samples[0].size);
      got.push_back(right ? lease->index : -1);
    }
    return got;
  });
  if (drained.wait_for(std::chrono::seconds(120)) != std::future_status::ready) {
    REQUIRE(pipeline->Stop().ok());  // unblocks Next, so the failure does not hang the test
    drained.wait();
    FAIL("the consumer waited for a batch that had completed: a lost wake-up");
  }
  return drained.get();
}

TEST_CASE("no batch is lost or doubled whether it is ready before, during or after the poll") {
  for (bool spare_cpu : {true, false}) {  // the consumer polls before it sleeps, or never
    for (uint64_t read_threads : {1, 2, 3}) {
      for (uint64_t computation_threads : {0, 2}) {
        INFO("spare_cpu " << spare_cpu << " read_threads " << read_threads
                          << " computation_threads " << computation_threads);
        PacedSource source(4, 100);  // 400 one-sample batches an epoch
        PipelineOptions options;
        options.name = "threaded";
        options.batch_size = 1;
        options.read_threads = read_threads;
        options.computation_threads = computation_threads;
        options.prefetch_size = 1;
        // With workers, a preprocessing step of 1 us (the workers complete the batches).
        if (computation_threads > 0) options.preprocess_time = Constant(1e-6);
        PipelineEnv env;
        env.source = &source;
        env.spare_cpu = [spare_cpu] { return spare_cpu; };
        auto made = MakeBatchPipeline(PipelineMode::kThreaded, options, env);
        REQUIRE(made.ok());
        std::unique_ptr<Pipeline> pipeline = std::move(made).value();
        for (uint64_t epoch = 0; epoch < 2; ++epoch) {
          const auto plan = MakePlan(source, epoch + 1);
          REQUIRE(pipeline->StartEpoch(epoch, plan).ok());
          const std::vector<int64_t> got = DrainPaced(pipeline.get(), source, plan);
          std::vector<int64_t> expected(plan.size());
          for (size_t k = 0; k < expected.size(); ++k) expected[k] = static_cast<int64_t>(k);
          REQUIRE(got == expected);  // every batch once, in order, with its sample's bytes
        }
        CHECK(pipeline->stats().batches_delivered == 2 * 400);
      }
    }
  }
}

TEST_CASE("the poll returns at once when ready, and stops polling once polls stop paying") {
  SpinBeforeSleep spin([] { return true; });
  int calls = 0;
  CHECK(spin.Poll([&] { return ++calls > 0; }));
  CHECK(calls == 1);
  CHECK(spin.budget_nanos() == SpinBeforeSleep::kMaxNanos);

  // Two failed polls, then one that pays: the count starts again.
  CHECK_FALSE(spin.Poll([] { return false; }));
  CHECK_FALSE(spin.Poll([] { return false; }));
  CHECK(spin.Poll([] { return true; }));
  // Never ready: after three failed polls in a row (each of the whole budget, or cut short by a
  // preemption) the polls stop.
  for (int64_t budget : {SpinBeforeSleep::kMaxNanos, SpinBeforeSleep::kMaxNanos, int64_t{0}}) {
    CHECK_FALSE(spin.Poll([] { return false; }));
    CHECK(spin.budget_nanos() == budget);
  }
  // At 0 the poll is skipped (the state is not even looked at), except every 64th call.
  calls = 0;
  for (uint32_t i = 1; i < SpinBeforeSleep::kProbeEvery; ++i) {
    CHECK_FALSE(spin.Poll([&] { return ++calls > 0; }));
  }
  CHECK(calls == 0);
  CHECK(spin.Poll([&] { return ++calls > 0; }));  // the probe, which pays: the budget is back
  CHECK(calls == 1);
  CHECK(spin.budget_nanos() == SpinBeforeSleep::kMaxNanos);
}

TEST_CASE("the poll waits for a spare CPU, asking at the first call and every 32nd") {
  bool spare = false;
  int asked = 0;
  SpinBeforeSleep spin([&] {
    ++asked;
    return spare;
  });
  int polled = 0;
  const auto ready = [&] { return ++polled > 0; };
  CHECK_FALSE(spin.Poll(ready));  // no spare CPU: the caller sleeps at once
  CHECK(asked == 1);
  spare = true;  // not asked again before the 33rd call
  for (uint32_t i = 1; i < SpinBeforeSleep::kCpuCheckEvery; ++i) CHECK_FALSE(spin.Poll(ready));
  CHECK(polled == 0);
  CHECK(asked == 1);
  CHECK(spin.Poll(ready));
  CHECK(asked == 2);
  CHECK(polled == 1);
  CHECK(spin.budget_nanos() == SpinBeforeSleep::kMaxNanos);  // not spent while there was none
}

TEST_CASE("the caller's lock is free while the poll runs and while the host is asked") {
  bool spare = false;
  SpinBeforeSleep spin([&] { return spare; });
  std::mutex mu;
  std::unique_lock<std::mutex> lock(mu);
  bool released = false;
  const auto ready = [&] {
    released = mu.try_lock();  // free while polling
    if (released) mu.unlock();
    return true;
  };
  CHECK_FALSE(spin.Poll(ready, &lock));  // no spare CPU (asked with the lock free): no poll
  CHECK(lock.owns_lock());
  CHECK_FALSE(released);
  int asked = 0;
  SpinBeforeSleep asking([&] {
    released = mu.try_lock();  // free while the host is asked
    if (released) mu.unlock();
    ++asked;
    return false;
  });
  CHECK_FALSE(asking.Poll(ready, &lock));
  CHECK(asked == 1);
  CHECK(released);
  CHECK(lock.owns_lock());
  released = false;
  spare = true;
  SpinBeforeSleep polling([&] { return spare; });
  CHECK(polling.Poll(ready, &lock));
  CHECK(released);
  CHECK(lock.owns_lock());
}

TEST_CASE("a poller needs a CPU of its own beside every thread its take may wake") {
  using pipeline_internal::HostHasSpareCpu;
  cpu_set_t before;
  REQUIRE(sched_getaffinity(0, sizeof before, &before) == 0);
  int first = 0;
  while (!CPU_ISSET(first, &before)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  REQUIRE(sched_setaffinity(0, sizeof one, &one) == 0);  // this thread: one CPU
  // One reader and the poller on one CPU: never, whatever the host's load.
  const bool one_reader = HostHasSpareCpu(1);
  const bool many = HostHasSpareCpu(1024);
  REQUIRE(sched_setaffinity(0, sizeof before, &before) == 0);
  CHECK_FALSE(one_reader);
  CHECK_FALSE(many);
  // As many threads as this thread's CPUs: no CPU is left for the poller.
  CHECK_FALSE(HostHasSpareCpu(static_cast<uint64_t>(CPU_COUNT(&before))));
}

TEST_CASE("the runnable threads are the fourth field of /proc/loadavg") {
  using pipeline_internal::RunnableInLoadavg;
  CHECK(RunnableInLoadavg("0.52 0.58 0.59 2/467 1234\n") == 2);
  CHECK(RunnableInLoadavg("12.00 9.50 7.25 17/1024 99") == 17);
  CHECK(RunnableInLoadavg("") == -1);
  CHECK(RunnableInLoadavg("0.52 0.58 0.59 x/467 1234") == -1);
  CHECK(RunnableInLoadavg("0.52 0.58") == -1);
}

}  // namespace
}  // namespace dlio
