// The pipelines' order, back-pressure, failures, cancellation, preload and buffer reuse.
#include "dlio/pipeline.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <future>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "dlio/registries.h"
#include "pipeline/fake_source.h"
#include "pipeline/pipeline_test_util.h"

namespace dlio {
namespace {

using testing::Constant;
using testing::DrainAndCheck;
using testing::FakeSource;
using testing::Make;
using testing::MakePlan;
using Ms = std::chrono::milliseconds;

TEST_CASE("threaded pipeline delivers the plan's order for every thread count and batch size") {
  FakeSource source(5, 7);  // 35 samples: batch 4 leaves a partial batch of 3
  for (uint64_t read_threads : {0, 1, 2, 4}) {
    for (uint64_t computation_threads : {0, 1, 3}) {
      for (uint64_t batch_size : {1, 4, 6}) {
        for (bool drop_last : {true, false}) {
          INFO("read_threads " << read_threads << " computation_threads " << computation_threads
                               << " batch " << batch_size << " drop_last " << drop_last);
          PipelineOptions options;
          options.batch_size = batch_size;
          options.read_threads = read_threads;
          options.computation_threads = computation_threads;
          options.prefetch_size = 2;
          options.drop_last = drop_last;
          options.preprocess_time = Constant(2e-6);
          auto pipeline = Make("threaded", options, &source);
          for (uint64_t epoch = 0; epoch < 3; ++epoch) {
            auto plan = MakePlan(source, epoch * 17);
            REQUIRE(pipeline->StartEpoch(epoch, plan).ok());
            DrainAndCheck(pipeline.get(), source, epoch, plan, batch_size, drop_last);
          }
          REQUIRE(pipeline->Stop().ok());
          REQUIRE(pipeline->Stop().ok());  // idempotent
        }
      }
    }
  }
}

TEST_CASE("sync and preload pipelines deliver the plan's order") {
  FakeSource source(4, 9);
  for (const char* name : {"sync", "preload"}) {
    for (uint64_t read_threads : {0, 1, 3}) {
      for (uint64_t batch_size : {1, 5}) {
        for (bool drop_last : {true, false}) {
          INFO(name << " read_threads " << read_threads << " batch " << batch_size << " drop_last "
                    << drop_last);
          PipelineOptions options;
          options.batch_size = batch_size;
          options.read_threads = read_threads;
          options.computation_threads = 2;
          options.drop_last = drop_last;
          options.preprocess_time = Constant(1e-6);
          options.preprocess_spin = read_threads == 3;
          auto pipeline = Make(name, options, &source);
          for (uint64_t epoch = 0; epoch < 3; ++epoch) {
            auto plan = MakePlan(source, epoch * 5);
            REQUIRE(pipeline->StartEpoch(epoch, plan).ok());
            DrainAndCheck(pipeline.get(), source, epoch, plan, batch_size, drop_last);
          }
        }
      }
    }
  }
}

TEST_CASE("threaded pipeline bounds how far readers run ahead of a consumer that does not pull") {
  FakeSource source(4, 50);
  PipelineOptions options;
  options.batch_size = 4;
  options.read_threads = 2;
  options.computation_threads = 1;
  options.prefetch_size = 2;
  auto pipeline = Make("threaded", options, &source);
  auto plan = MakePlan(source, 3);
  REQUIRE(pipeline->StartEpoch(0, plan).ok());
  // prefetch_size ready batches + read_threads batches in flight, then the readers must stop.
  const uint64_t bound = (options.prefetch_size + options.read_threads) * options.batch_size;
  const auto deadline = std::chrono::steady_clock::now() + Ms(3000);
  while (source.reads() < bound && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(Ms(2));
  }
  std::this_thread::sleep_for(Ms(50));
  CHECK(source.reads() == bound);  // stopped at the bound, not merely slow
  // Consuming one batch lets exactly one more batch in.
  BatchLease lease;
  bool end = false;
  REQUIRE(pipeline->Next(&lease, &end).ok());
  lease.reset();
  std::this_thread::sleep_for(Ms(50));
  CHECK(source.reads() <= bound + options.batch_size);
  CHECK(pipeline->stats().batches_allocated == options.prefetch_size + options.read_threads + 1);
}

TEST_CASE("a read failure in batch 3 arrives after batches 0-2 and names the file and sample") {
  FakeSource source(3, 10);
  for (const char* name : {"threaded", "sync", "preload"}) {
    for (uint64_t read_threads : {0, 1, 4}) {
      INFO(name << " read_threads " << read_threads);
      PipelineOptions options;
      options.batch_size = 4;
      options.read_threads = read_threads;
      options.computation_threads = 1;
      options.preprocess_time = Constant(1e-6);
      auto pipeline = Make(name, options, &source);
      auto plan = MakePlan(source, 11);
      const SampleRef bad = plan[3 * 4 + 2];
      source.FailAt(bad);
      REQUIRE(pipeline->StartEpoch(0, plan).ok());
      BatchLease lease;
      bool end = false;
      for (int64_t b = 0; b < 3; ++b) {
        REQUIRE(pipeline->Next(&lease, &end).ok());
        REQUIRE_FALSE(end);
        CHECK(lease->index == b);
      }
      Status st = pipeline->Next(&lease, &end);
      REQUIRE_FALSE(st.ok());
      CHECK_FALSE(lease);
      CHECK(st.code() == StatusCode::kIOError);
      const std::string path = source.file_path(bad.file);
      CHECK_THAT(st.message(), Catch::Contains(path));
      CHECK_THAT(st.message(), Catch::Contains("sample " + std::to_string(bad.index)));
      CHECK_THAT(st.message(), Catch::Contains("injected failure"));
      CHECK_THAT(st.message(), Catch::Contains("batch 3"));
      // Sticky until the next epoch.
      Status again = pipeline->Next(&lease, &end);
      CHECK(again.code() == st.code());
      CHECK(again.message() == st.message());
      // A new epoch without the failure runs clean.
      source.ClearFailure();
      REQUIRE(pipeline->StartEpoch(1, plan).ok());
      DrainAndCheck(pipeline.get(), source, 1, plan, 4, true);
    }
  }
}

TEST_CASE("Stop while the consumer waits in Next returns Cancelled promptly") {
  FakeSource source(2, 20);
  source.set_delay_us(300000);  // 300 ms per read
  for (const char* name : {"threaded", "sync"}) {
    INFO(name);
    PipelineOptions options;
    options.batch_size = 4;
    options.read_threads = 2;
    auto pipeline = Make(name, options, &source);
    REQUIRE(pipeline->StartEpoch(0, MakePlan(source, 0)).ok());
    auto waiter = std::async(std::launch::async, [&] {
      BatchLease lease;
      bool end = false;
      Status st = pipeline->Next(&lease, &end);
      return std::make_pair(st, std::chrono::steady_clock::now());
    });
    std::this_thread::sleep_for(Ms(50));
    const auto stop_at = std::chrono::steady_clock::now();
    REQUIRE(pipeline->Stop().ok());
    const auto stopped = std::chrono::steady_clock::now();
    auto [st, returned_at] = waiter.get();
    CHECK(st.code() == StatusCode::kCancelled);
    CHECK(returned_at - stop_at < Ms(200));  // woken at once, not after the 300 ms read
    CHECK(stopped - stop_at < Ms(1000));     // joins after at most the reads in flight
    BatchLease lease;
    bool end = false;
    CHECK(pipeline->Next(&lease, &end).code() == StatusCode::kCancelled);
    CHECK(pipeline->StartEpoch(1, MakePlan(source, 0)).code() == StatusCode::kFailedPrecondition);
  }
  source.set_delay_us(0);
}

TEST_CASE("StartEpoch mid-epoch cancels the old epoch, even with a lease still held") {
  FakeSource source(4, 12);
  for (uint64_t read_threads : {0, 1, 3}) {
    INFO("read_threads " << read_threads);
    PipelineOptions options;
    options.batch_size = 3;
    options.read_threads = read_threads;
    options.computation_threads = 2;
    options.prefetch_size = 2;
    options.preprocess_time = Constant(1e-6);
    auto pipeline = Make("threaded", options, &source);
    auto plan0 = MakePlan(source, 1);
    REQUIRE(pipeline->StartEpoch(0, plan0).ok());
    BatchLease held, lease;
    bool end = false;
    REQUIRE(pipeline->Next(&lease, &end).ok());
    REQUIRE(pipeline->Next(&held, &end).ok());
    REQUIRE(held->index == 1);
    const std::vector<Sample> held_samples = held->samples;
    std::this_thread::sleep_for(Ms(5));  // let readers get busy on epoch 0
    auto plan1 = MakePlan(source, 2);
    REQUIRE(pipeline->StartEpoch(1, plan1).ok());
    DrainAndCheck(pipeline.get(), source, 1, plan1, 3, true);
    // The held batch from epoch 0 was not reused by epoch 1.
    REQUIRE(held->samples.size() == held_samples.size());
    for (size_t j = 0; j < held_samples.size(); ++j) {
      CHECK(held->samples[j].data == held_samples[j].data);
      CHECK(source.Matches(held_samples[j].ref, held->samples[j].data, held->samples[j].size));
    }
    held.reset();
    auto plan2 = MakePlan(source, 3);
    REQUIRE(pipeline->StartEpoch(2, plan2).ok());
    DrainAndCheck(pipeline.get(), source, 2, plan2, 3, false);
  }
}

TEST_CASE("Next fails instead of deadlocking when every pooled batch is leased") {
  FakeSource source(2, 10);
  PipelineOptions options;
  options.batch_size = 2;
  options.read_threads = 1;
  options.prefetch_size = 0;  // pool of 2 batches
  auto pipeline = Make("threaded", options, &source);
  REQUIRE(pipeline->StartEpoch(0, MakePlan(source, 0)).ok());
  BatchLease a, b, c;
  bool end = false;
  REQUIRE(pipeline->Next(&a, &end).ok());
  REQUIRE(pipeline->Next(&b, &end).ok());
  Status st = pipeline->Next(&c, &end);
  CHECK(st.code() == StatusCode::kFailedPrecondition);
  CHECK_THAT(st.message(), Catch::Contains("leased"));
  a.reset();
  REQUIRE(pipeline->Next(&c, &end).ok());
  CHECK(c->index == 2);
}

TEST_CASE("preload reads everything before the first batch and nothing in later epochs") {
  FakeSource source(3, 8);
  PipelineOptions options;
  options.batch_size = 5;
  options.drop_last = false;
  options.read_threads = 3;
  options.computation_threads = 2;
  options.preprocess_time = Constant(1e-6);
  auto pipeline = Make("preload", options, &source);
  // Epoch 0 covers files 0 and 1 only (with a repeated sample).
  std::vector<SampleRef> plan0;
  for (const auto& ref : MakePlan(source, 4)) {
    if (ref.file < 2) plan0.push_back(ref);
  }
  plan0.push_back(plan0.front());
  REQUIRE(pipeline->StartEpoch(0, plan0).ok());
  CHECK(source.reads() == 16);  // distinct samples, all read up front
  DrainAndCheck(pipeline.get(), source, 0, plan0, 5, false);
  CHECK(source.reads() == 16);

  // Same samples in another order: served from memory, same stored bytes.
  std::vector<SampleRef> plan1 = plan0;
  std::shuffle(plan1.begin(), plan1.end(), std::mt19937_64(9));
  REQUIRE(pipeline->StartEpoch(1, plan1).ok());
  CHECK(source.reads() == 16);
  DrainAndCheck(pipeline.get(), source, 1, plan1, 5, false);
  CHECK(source.reads() == 16);

  // A plan with file 2 too: only file 2's samples are read.
  auto plan2 = MakePlan(source, 6);
  REQUIRE(pipeline->StartEpoch(2, plan2).ok());
  CHECK(source.reads() == 24);
  DrainAndCheck(pipeline.get(), source, 2, plan2, 5, false);
  CHECK(source.reads() == 24);
  CHECK(pipeline->stats().samples_read == 24);
  CHECK(pipeline->stats().buffers_allocated == 24);
}

TEST_CASE("preload batches point into the store without copying") {
  FakeSource source(2, 6);
  PipelineOptions options;
  options.batch_size = 12;
  options.read_threads = 2;
  auto pipeline = Make("preload", options, &source);
  std::map<std::pair<uint32_t, uint64_t>, const uint8_t*> where;
  for (uint64_t epoch = 0; epoch < 2; ++epoch) {
    REQUIRE(pipeline->StartEpoch(epoch, MakePlan(source, epoch + 1)).ok());
    BatchLease lease;
    bool end = false;
    REQUIRE(pipeline->Next(&lease, &end).ok());
    for (const Sample& s : lease->samples) {
      auto [it, inserted] = where.emplace(std::make_pair(s.ref.file, s.ref.index), s.data);
      CHECK(it->second == s.data);
    }
  }
  CHECK(where.size() == 12);
}

TEST_CASE("sync pipeline reads a batch only inside Next") {
  FakeSource source(2, 16);
  for (uint64_t read_threads : {1, 3}) {
    INFO("read_threads " << read_threads);
    FakeSource counted(2, 16);
    PipelineOptions options;
    options.batch_size = 4;
    options.read_threads = read_threads;
    options.prefetch_size = 4;
    auto pipeline = Make("sync", options, &counted);
    REQUIRE(pipeline->StartEpoch(0, MakePlan(counted, 2)).ok());
    std::this_thread::sleep_for(Ms(30));
    CHECK(counted.reads() == 0);
    BatchLease lease;
    bool end = false;
    REQUIRE(pipeline->Next(&lease, &end).ok());
    CHECK(counted.reads() == 4);
    std::this_thread::sleep_for(Ms(30));  // the consumer "computes": nothing may run
    CHECK(counted.reads() == 4);
    REQUIRE(pipeline->Next(&lease, &end).ok());
    CHECK(counted.reads() == 8);
  }
}

TEST_CASE("pooled buffers are reused: a buffer grows at most once, then nothing is allocated") {
  FakeSource source(4, 16, /*fixed_size=*/4096);
  for (uint64_t reserve : {0, 4096}) {
    INFO("reserve_sample_bytes " << reserve);
    PipelineOptions options;
    options.batch_size = 4;
    options.read_threads = 2;
    options.computation_threads = 1;
    options.prefetch_size = 2;
    options.reserve_sample_bytes = reserve;
    auto pipeline = Make("threaded", options, &source);
    std::set<const uint8_t*> seen;
    for (uint64_t epoch = 0; epoch < 3; ++epoch) {
      auto plan = MakePlan(source, epoch + 1);
      REQUIRE(pipeline->StartEpoch(epoch, plan).ok());
      BatchLease lease;
      bool end = false;
      while (pipeline->Next(&lease, &end).ok() && !end) {
        for (const Sample& s : lease->samples) seen.insert(s.data);
      }
    }
    const PipelineStats stats = pipeline->stats();
    // The pool is fixed: prefetch + in flight + 1 batches of 4 buffers, whichever of them the
    // LIFO free list hands out. With samples of one size a buffer grows once, on its first use,
    // or never when the pool was reserved up front.
    CHECK(stats.buffers_allocated == stats.batches_allocated * options.batch_size);
    CHECK(seen.size() <= stats.buffers_allocated);
    CHECK(stats.buffer_growths <= (reserve ? 0 : stats.buffers_allocated));
    CHECK(stats.buffer_bytes == stats.buffer_growths * 4096);
    CHECK(stats.samples_read == 3 * 64);
    CHECK(stats.batches_delivered == 3 * 16);
  }
}

TEST_CASE("a consumer that reads no byte: each reader reads into one buffer of its own") {
  // deliver_sample_bytes false (dlio-run): every sample is read whole, in plan order, with its
  // size, into its reader's own buffer (the pool's stay empty); streaming readers' buffers are
  // one ring of kReaderRingBytes (256 KiB) whatever the sample size. The consumer (read_threads
  // 0) has one too.
  const uint64_t sample = 3 << 20;
  FakeSource source(2, 8, sample);
  for (const bool stream : {false, true}) {
    for (const uint64_t threads : {0, 2}) {
      INFO("samples_stream " << stream << ", read_threads " << threads);
      PipelineOptions options;
      options.batch_size = 4;
      options.read_threads = threads;
      options.prefetch_size = 2;
      options.deliver_sample_bytes = false;
      options.samples_stream = stream;
      options.reserve_sample_bytes = sample;
      auto pipeline = Make("threaded", options, &source);
      std::set<const uint8_t*> buffers;
      for (uint64_t epoch = 0; epoch < 2; ++epoch) {
        const auto plan = MakePlan(source, epoch + 1);
        REQUIRE(pipeline->StartEpoch(epoch, plan).ok());
        BatchLease lease;
        bool end = false;
        uint64_t next = 0;
        while (pipeline->Next(&lease, &end).ok() && !end) {
          CHECK(lease->bytes == 4 * sample);
          for (const Sample& s : lease->samples) {
            REQUIRE(s.ref == plan[next++]);
            CHECK(s.size == sample);
            buffers.insert(s.data);
          }
        }
        CHECK(next == plan.size());
      }
      CHECK(buffers.size() <= threads + 1);
      const PipelineStats stats = pipeline->stats();
      if (stream) {
        CHECK(stats.reserved_bytes == (threads + 1) * (uint64_t{256} << 10));
      } else {  // a sample's capacity each, as the heap rounds it
        CHECK(stats.reserved_bytes >= (threads + 1) * sample);
        CHECK(stats.reserved_bytes <= (threads + 1) * 2 * sample);
      }
      CHECK(stats.buffer_growths == 0);
      CHECK(stats.samples_read == 2 * 16);
    }
  }
}

TEST_CASE("preprocessing time is spent per sample, by the workers or inline") {
  FakeSource source(1, 10);
  for (uint64_t computation_threads : {0, 1}) {
    for (bool spin : {false, true}) {
      INFO("computation_threads " << computation_threads << " spin " << spin);
      PipelineOptions options;
      options.batch_size = 5;
      options.read_threads = 1;
      options.computation_threads = computation_threads;
      options.preprocess_time = Constant(0.002);
      options.preprocess_spin = spin;
      auto pipeline = Make("threaded", options, &source);
      const auto start = std::chrono::steady_clock::now();
      auto plan = MakePlan(source, 0);
      REQUIRE(pipeline->StartEpoch(0, plan).ok());
      DrainAndCheck(pipeline.get(), source, 0, plan, 5, true);
      // One thread preprocesses 10 samples of 2 ms each, one after the other.
      CHECK(std::chrono::steady_clock::now() - start >= Ms(20));
    }
  }
}

TEST_CASE("pipeline edge cases: bad options, Next before StartEpoch, empty plan, read_ns") {
  FakeSource source(1, 4);
  Registries registries;
  REQUIRE(RegisterBuiltinPipelines(&registries.pipelines).ok());
  for (const char* name : {"threaded", "sync", "preload"})
    CHECK(registries.pipelines.Contains(name));
  auto factory = registries.pipelines.Get("threaded");
  REQUIRE(factory.ok());
  PipelineEnv env;
  env.source = &source;
  PipelineOptions bad;
  bad.batch_size = 0;
  auto made = (*factory)(bad, env);
  REQUIRE_FALSE(made.ok());
  CHECK_THAT(made.status().message(), Catch::Contains("reader.batch_size"));
  PipelineOptions negative;
  negative.preprocess_time = Constant(-1);
  made = (*factory)(negative, env);
  REQUIRE_FALSE(made.ok());
  CHECK_THAT(made.status().message(), Catch::Contains("reader.preprocess_time"));
  made = (*factory)(PipelineOptions{}, PipelineEnv{});
  CHECK_FALSE(made.ok());

  PipelineOptions options;
  options.batch_size = 2;
  auto pipeline = Make("threaded", options, &source);
  BatchLease lease;
  bool end = false;
  CHECK(pipeline->Next(&lease, &end).code() == StatusCode::kFailedPrecondition);
  REQUIRE(pipeline->StartEpoch(0, {}).ok());
  REQUIRE(pipeline->Next(&lease, &end).ok());
  CHECK(end);

  source.set_delay_us(2000);
  REQUIRE(pipeline->StartEpoch(1, MakePlan(source, 0)).ok());
  REQUIRE(pipeline->Next(&lease, &end).ok());
  REQUIRE_FALSE(end);
  CHECK(lease->read_ns >= 2'000'000);  // two reads of >= 2 ms each on one reader thread
  source.set_delay_us(0);
}

// A FakeSource whose read of one sample waits until the test opens its gate.
class GatedSource : public FakeSource {
 public:
  GatedSource(size_t files, uint64_t samples, SampleRef gated)
      : FakeSource(files, samples), gated_(gated), open_(gate_.get_future().share()) {}
  Status Read(SampleRef ref, SampleBuffer* out) override {
    if (ref == gated_) open_.wait();
    return FakeSource::Read(ref, out);
  }
  void Open() { gate_.set_value(); }

 private:
  SampleRef gated_;
  std::promise<void> gate_;
  std::shared_future<void> open_;
};

TEST_CASE("the consumer waiting for batch 0 gets it after later batches completed first") {
  // Batch 0's read is held while the other reader completes batches 1.. up to the prefetch
  // window; the consumer, asleep on batch 0 meanwhile, is woken by batch 0 alone (which the
  // reader that read it hands over, BatchPipeline::MarkReady) and gets every batch in order,
  // with a shared cursor and with reader lanes.
  for (uint64_t lanes : {0, 2}) {
    INFO("reader_lanes " << lanes);
    GatedSource source(1, 10, SampleRef{0, 0});
    PipelineOptions options;
    options.batch_size = 1;
    options.read_threads = 2;
    options.reader_lanes = lanes;
    options.computation_threads = 0;
    options.prefetch_size = 2;
    options.deliver_sample_bytes = lanes == 0;
    auto pipeline = Make("threaded", options, &source);
    const auto plan = MakePlan(source, 0);
    REQUIRE(pipeline->StartEpoch(0, plan).ok());
    auto first = std::async(std::launch::async, [&] {
      BatchLease lease;
      bool end = false;
      Status st = pipeline->Next(&lease, &end);
      const bool got = st.ok() && !end && lease && lease->index == 0 &&
                       lease->samples.size() == 1 && lease->samples[0].ref == plan[0];
      return std::make_pair(st, got);
    });
    // Window: prefetch 2 + 2 readers = batches 0-3; batch 0 held, so the others read 1-3
    // (shared cursor) or 1 and 3 (lanes: batch 2 is the held reader's).
    const uint64_t others = lanes == 0 ? 3 : 2;
    const auto deadline = std::chrono::steady_clock::now() + Ms(20000);
    while (source.reads() < others && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(Ms(1));
    }
    REQUIRE(source.reads() == others);
    source.Open();
    if (first.wait_for(Ms(20000)) != std::future_status::ready) {
      REQUIRE(pipeline->Stop().ok());  // unblocks Next, so the failure does not hang the test
      FAIL("the consumer was not woken when batch 0 completed");
    }
    const auto [st, got] = first.get();
    REQUIRE(st.ok());
    CHECK(got);
    BatchLease lease;
    bool end = false;
    for (int64_t k = 1; k < static_cast<int64_t>(plan.size()); ++k) {
      REQUIRE(pipeline->Next(&lease, &end).ok());
      REQUIRE_FALSE(end);
      CHECK(lease->index == k);
      CHECK(lease->samples[0].ref == plan[static_cast<size_t>(k)]);
      CHECK(lease->samples[0].size == source.SizeOf(plan[static_cast<size_t>(k)]));
    }
    REQUIRE(pipeline->Next(&lease, &end).ok());
    CHECK(end);
    // Each batch counted delivered once, whether the consumer or the reader that filled it (the
    // consumer asleep on it) delivered it.
    CHECK(pipeline->stats().batches_delivered == plan.size());
  }
}

}  // namespace
}  // namespace dlio
