// The consumer's wait for its batch (BatchPipeline::AwaitBatch): a bounded poll before it sleeps
// on the condition variable (SpinBeforeSleep), so that no batch is lost or delivered twice
// whether it completes before Next, during the poll or after the consumer went to sleep; and,
// with PipelineOptions::consumer_wakes_per_run, one wake-up per run of filled batches.
#include <sched.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <future>
#include <mutex>
#include <string>
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
  // (consumer_wakes_per_run, prefetch_size): woken by its batch; woken per run of 1 batch (a
  // window of 3 or less) or of up to 3 or 4 batches.
  const std::pair<bool, uint64_t> waits[] = {{false, 1}, {true, 1}, {true, 6}};
  for (const auto& [per_run, prefetch] : waits) {
    for (bool spare_cpu : {true, false}) {  // the consumer polls before it sleeps, or never
      for (uint64_t read_threads : {1, 2, 3}) {
        for (uint64_t computation_threads : {0, 2}) {
          INFO("per_run " << per_run << " prefetch " << prefetch << " spare_cpu " << spare_cpu
                          << " read_threads " << read_threads << " computation_threads "
                          << computation_threads);
          PacedSource source(4, 100);  // 400 one-sample batches an epoch
          PipelineOptions options;
          options.name = "threaded";
          options.batch_size = 1;
          options.read_threads = read_threads;
          options.computation_threads = computation_threads;
          options.prefetch_size = prefetch;
          options.consumer_wakes_per_run = per_run;
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
}

// A FakeSource whose read of sample i (file 0) waits until the test has released more than i
// samples, and counts the reads that began and those that returned.
class SteppedSource : public FakeSource {
 public:
  using FakeSource::FakeSource;
  Status Read(SampleRef ref, SampleBuffer* out) override {
    {
      std::unique_lock<std::mutex> lock(mu_);
      ++began_;
      cv_.wait(lock, [&] { return released_ > ref.index; });
    }
    Status st = FakeSource::Read(ref, out);
    done_.fetch_add(1);
    return st;
  }
  void Release(uint64_t samples) {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = samples;
    cv_.notify_all();
  }
  // Waits (up to 20 s) until `n` reads returned.
  bool AwaitDone(uint64_t n) const {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (done_.load() < n && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return done_.load() >= n;
  }
  uint64_t began() {
    std::lock_guard<std::mutex> lock(mu_);
    return began_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t released_ = 0, began_ = 0;
  std::atomic<uint64_t> done_{0};
};

// Thread `tid` of this process is asleep (state S in /proc).
bool Asleep(pid_t tid) {
  std::ifstream stat("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t paren = text.rfind(')');
  return paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] == 'S';
}

// A consumer thread that takes the next batch when asked; `got` is the batch index it took, or
// -1 for an error (the status kept in `status`).
struct Taker {
  explicit Taker(Pipeline* p) : pipeline(p) {}
  Pipeline* pipeline;
  std::atomic<pid_t> tid{0};
  std::atomic<int64_t> got{-2};  // -2: still in Next
  Status status;
  BatchLease lease;
  void Take() {
    got.store(-2);
    tid.store(gettid());
    bool end = false;
    status = pipeline->Next(&lease, &end);
    got.store(status.ok() && !end ? lease->index : -1);
  }
};

// Waits until the taker sleeps inside Next (no poll: spare_cpu false) while the one reader is
// held in its read of sample 0, where it holds no lock the taker could be waiting for; false
// after 20 s.
bool SleepsInNext(const Taker& taker, SteppedSource* source) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    if (source->began() > 0 && taker.tid.load() != 0 && taker.got.load() == -2 &&
        Asleep(taker.tid.load())) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

std::unique_ptr<Pipeline> MakeStepped(SteppedSource* source, bool per_run) {
  PipelineOptions options;
  options.name = "threaded";
  options.batch_size = 1;
  options.read_threads = 1;
  options.computation_threads = 0;
  options.prefetch_size = 5;  // window 6: runs of 3 batches
  options.consumer_wakes_per_run = per_run;
  PipelineEnv env;
  env.source = source;
  env.spare_cpu = [] { return false; };
  auto made = MakeBatchPipeline(PipelineMode::kThreaded, options, env);
  REQUIRE(made.ok());
  return std::move(made).value();
}

TEST_CASE("a consumer woken per run sleeps until the run's last batch is filled") {
  for (bool per_run : {false, true}) {
    INFO("consumer_wakes_per_run " << per_run);
    SteppedSource source(1, 12);
    std::unique_ptr<Pipeline> pipeline = MakeStepped(&source, per_run);
    REQUIRE(pipeline->StartEpoch(0, MakePlan(source, 0)).ok());
    Taker taker(pipeline.get());
    std::thread consumer([&] { taker.Take(); });
    REQUIRE(SleepsInNext(taker, &source));
    source.Release(1);  // batch 0
    REQUIRE(source.AwaitDone(1));
    if (per_run) {
      // Batches 1 and 2 were open when it went to sleep: it wakes when batch 2 is filled. (A
      // wrong early wake-up may go unseen on a loaded host; a right sleep is never seen as one.)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      CHECK(taker.got.load() == -2);
      source.Release(2);
      REQUIRE(source.AwaitDone(2));
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      CHECK(taker.got.load() == -2);
      source.Release(3);
    }
    consumer.join();
    REQUIRE(taker.status.ok());
    CHECK(taker.got.load() == 0);
    source.Release(12);
    for (int64_t k = 1; k < 12; ++k) {
      taker.Take();
      REQUIRE(taker.status.ok());
      CHECK(taker.got.load() == k);
    }
    taker.lease = BatchLease();
  }
}

TEST_CASE("a consumer woken per run wakes at a failed read before the run's end") {
  // The read of batch 1 fails; the reader then stops, so batch 2, the run's last, never fills.
  SteppedSource source(1, 12);
  source.FailAt(SampleRef{0, 1});
  std::unique_ptr<Pipeline> pipeline = MakeStepped(&source, true);
  REQUIRE(pipeline->StartEpoch(0, MakePlan(source, 0)).ok());
  Taker taker(pipeline.get());
  auto first = std::async(std::launch::async, [&] { taker.Take(); });
  REQUIRE(SleepsInNext(taker, &source));
  source.Release(2);
  if (first.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
    REQUIRE(pipeline->Stop().ok());  // unblocks Next, so the failure does not hang the test
    FAIL("the consumer slept on past the failed read of batch 1");
  }
  REQUIRE(taker.status.ok());
  CHECK(taker.got.load() == 0);
  taker.Take();
  CHECK(taker.got.load() == -1);
  CHECK(taker.status.message().find("injected failure") != std::string::npos);
  source.Release(12);
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
