// Pipeline options beyond ordering: decoding on the preprocessing stage, pre-touched buffers,
// files kept open across epochs.
#include <catch2/catch.hpp>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "dlio/format.h"
#include "dlio/pipeline.h"
#include "dlio/registries.h"
#include "pipeline/fake_source.h"
#include "pipeline/pipeline_test_util.h"

namespace dlio {
namespace {

using testing::FakeSource;

// A decoder that doubles every byte into two, and fails on a sample whose first byte is `poison`.
class DoublingFormat : public Format {
 public:
  explicit DoublingFormat(int poison = -1) : poison_(poison) {}
  std::string name() const override { return "doubling"; }
  std::string extension() const override { return "dbl"; }
  bool variable_sample_sizes() const override { return true; }
  Status Write(Storage*, const std::string&, const FileSpec&, const FormatOptions&) const override {
    return Status::Unimplemented("test format");
  }
  Result<std::unique_ptr<FormatReader>> Open(Storage*, const std::string&,
                                             const FormatOptions&) const override {
    return Status::Unimplemented("test format");
  }
  bool has_decoder() const override { return true; }
  Status Decode(const uint8_t* data, size_t size, SampleBuffer* out) const override {
    if (size > 0 && data[0] == poison_) {
      return Status::Corruption("cannot decode: poisoned first byte at offset 0");
    }
    DLIO_RETURN_NOT_OK(out->Resize(2 * size));
    for (size_t i = 0; i < size; ++i) out->data()[2 * i] = out->data()[2 * i + 1] = data[i];
    return Status::OK();
  }
  Status DecodeWithLimit(const uint8_t* data, size_t size, uint64_t max_decoded_bytes,
                         SampleBuffer* out) const override {
    if (2 * size > max_decoded_bytes) {
      return Status::ResourceExhausted("decodes to more than reader.max_decoded_bytes");
    }
    return Decode(data, size, out);
  }

 private:
  int poison_;
};

std::vector<SampleRef> Plan(const FakeSource& source) { return testing::MakePlan(source, 0); }

Result<std::unique_ptr<Pipeline>> Build(const std::string& name, PipelineOptions options,
                                        PipelineEnv env) {
  Registries registries;
  DLIO_RETURN_NOT_OK(RegisterBuiltinPipelines(&registries.pipelines));
  DLIO_ASSIGN_OR_RETURN(auto factory, registries.pipelines.Get(name));
  options.name = name;
  return factory(options, env);
}

TEST_CASE("decoding: batches carry decoded bytes, Batch::bytes counts the bytes read") {
  FakeSource source(3, 8);
  DoublingFormat format;
  const auto plan = Plan(source);
  for (const std::string name : {"threaded", "sync", "preload"}) {
    for (uint64_t computation_threads : {0, 2}) {
      INFO(name << " computation_threads " << computation_threads);
      PipelineOptions options;
      options.batch_size = 4;
      options.read_threads = 2;
      options.computation_threads = computation_threads;
      PipelineEnv env;
      env.source = &source;
      env.decoder = &format;
      auto pipeline = Build(name, options, env);
      REQUIRE(pipeline.ok());
      for (uint64_t epoch : {0, 1}) {
        REQUIRE((*pipeline)->StartEpoch(epoch, plan).ok());
        BatchLease lease;
        bool end = false;
        size_t seen = 0;
        while (true) {
          REQUIRE((*pipeline)->Next(&lease, &end).ok());
          if (end) break;
          uint64_t read = 0;
          for (const Sample& s : lease->samples) {
            const uint64_t stored = source.SizeOf(s.ref);
            read += stored;
            REQUIRE(s.size == 2 * stored);
            for (uint64_t i = 0; i < stored; ++i) {
              REQUIRE(s.data[2 * i] == FakeSource::ByteAt(s.ref, i));
              REQUIRE(s.data[2 * i + 1] == FakeSource::ByteAt(s.ref, i));
            }
            ++seen;
          }
          CHECK(lease->bytes == read);
        }
        // Epoch 1 decodes again from intact stored bytes (preload serves them from its store).
        CHECK(seen == plan.size());
      }
    }
  }
}

TEST_CASE("decoding: the pipeline hands PipelineEnv::max_decoded_bytes to the decoder") {
  FakeSource source(1, 4, /*fixed_size=*/8);  // each sample decodes to 16 bytes
  DoublingFormat format;
  for (const uint64_t limit : {uint64_t{16}, uint64_t{15}}) {
    CAPTURE(limit);
    PipelineOptions options;
    options.batch_size = 2;
    PipelineEnv env;
    env.source = &source;
    env.decoder = &format;
    env.max_decoded_bytes = limit;
    auto pipeline = Build("sync", options, env);
    REQUIRE(pipeline.ok());
    REQUIRE((*pipeline)->StartEpoch(0, Plan(source)).ok());
    BatchLease lease;
    bool end = false;
    Status st = (*pipeline)->Next(&lease, &end);
    CHECK(st.ok() == (limit == 16));
    if (!st.ok()) CHECK(st.code() == StatusCode::kResourceExhausted);
  }
}

TEST_CASE("decoding: a decode failure arrives in order and names the sample") {
  FakeSource source(1, 12, /*fixed_size=*/8);
  // FakeSource's byte 0 of (file 0, index i) is 7*i: poison sample 5.
  DoublingFormat format(/*poison=*/35);
  PipelineOptions options;
  options.batch_size = 2;
  options.read_threads = 2;
  options.computation_threads = 1;
  PipelineEnv env;
  env.source = &source;
  env.decoder = &format;
  auto pipeline = Build("threaded", options, env);
  REQUIRE(pipeline.ok());
  REQUIRE((*pipeline)->StartEpoch(0, Plan(source)).ok());
  BatchLease lease;
  bool end = false;
  for (int k = 0; k < 2; ++k) {
    REQUIRE((*pipeline)->Next(&lease, &end).ok());
    REQUIRE_FALSE(end);
    CHECK(lease->index == k);
  }
  lease.reset();
  Status st = (*pipeline)->Next(&lease, &end);
  REQUIRE_FALSE(st.ok());
  CHECK(st.code() == StatusCode::kCorruption);
  CHECK(st.message().find("poisoned") != std::string::npos);
  CHECK(st.message().find("sample 5") != std::string::npos);
}

TEST_CASE("reserve_sample_bytes pre-touches the pool: the first epoch grows no buffer") {
  FakeSource source(2, 4, /*fixed_size=*/1 << 20);
  PipelineOptions options;
  options.batch_size = 2;
  options.read_threads = 2;
  options.prefetch_size = 1;
  options.reserve_sample_bytes = 1 << 20;
  PipelineEnv env;
  env.source = &source;
  auto pipeline = Build("threaded", options, env);
  REQUIRE(pipeline.ok());
  REQUIRE((*pipeline)->StartEpoch(0, Plan(source)).ok());
  BatchLease lease;
  bool end = false;
  while ((*pipeline)->Next(&lease, &end).ok() && !end) {
  }
  CHECK(end);
  const PipelineStats stats = (*pipeline)->stats();
  CHECK(stats.samples_read == 8);
  CHECK(stats.buffer_growths == 0);
  CHECK(stats.buffer_bytes == 0);

  // Without the reservation the same epoch grows every pooled buffer it uses.
  options.reserve_sample_bytes = 0;
  auto lazy = Build("threaded", options, env);
  REQUIRE(lazy.ok());
  REQUIRE((*lazy)->StartEpoch(0, Plan(source)).ok());
  while ((*lazy)->Next(&lease, &end).ok() && !end) {
  }
  CHECK((*lazy)->stats().buffer_growths > 0);
}

TEST_CASE("files stay open across epochs unless reopen_files_each_epoch") {
  for (bool reopen : {false, true}) {
    INFO("reopen " << reopen);
    FakeSource source(2, 4);
    PipelineOptions options;
    options.batch_size = 2;
    options.read_threads = 1;
    options.reopen_files_each_epoch = reopen;
    PipelineEnv env;
    env.source = &source;
    auto pipeline = Build("threaded", options, env);
    REQUIRE(pipeline.ok());
    for (uint64_t epoch = 0; epoch < 3; ++epoch) {
      REQUIRE((*pipeline)->StartEpoch(epoch, Plan(source)).ok());
      BatchLease lease;
      bool end = false;
      while ((*pipeline)->Next(&lease, &end).ok() && !end) {
      }
    }
    CHECK(source.close_alls() == (reopen ? 2u : 0u));
  }
}

namespace dlio {
namespace {

TEST_CASE("a consumer that keeps up cycles the most recently released buffers") {
  FakeSource source(4, 8, /*fixed_size=*/1024);
  PipelineOptions options;
  options.batch_size = 2;
  options.read_threads = 1;
  options.prefetch_size = 4;  // a ring of 6 slots, 12 buffers
  PipelineEnv env;
  env.source = &source;
  auto pipeline = Build("sync", options, env);
  REQUIRE(pipeline.ok());
  std::set<const uint8_t*> used;
  for (uint64_t epoch = 0; epoch < 2; ++epoch) {
    REQUIRE((*pipeline)->StartEpoch(epoch, Plan(source)).ok());
    BatchLease lease;
    bool end = false;
    while ((*pipeline)->Next(&lease, &end).ok() && !end) {
      for (const Sample& s : lease->samples) {
        REQUIRE(source.Matches(s.ref, s.data, s.size));
        used.insert(s.data);
      }
      lease.reset();  // released before the next batch is read
    }
  }
  // Sync reads batch k only in Next, after batch k-1 came back: the same two buffers serve all.
  CHECK((*pipeline)->stats().buffers_allocated == 12);
  CHECK(used.size() == 2);
}

}  // namespace
}  // namespace dlio

TEST_CASE("reserve_buffers touches the buffers the pool hands out first: none grows after it") {
  FakeSource source(2, 8, /*fixed_size=*/1 << 20);
  PipelineOptions options;
  options.batch_size = 2;
  options.read_threads = 0;  // read in Next, after the previous batch went back to the pool
  options.prefetch_size = 2;
  options.reserve_sample_bytes = 1 << 20;
  options.reserve_buffers = 2;  // one batch: all a consumer that reads inline ever holds
  PipelineEnv env;
  env.source = &source;
  auto pipeline = Build("threaded", options, env);
  REQUIRE(pipeline.ok());
  // (prefetch 2 + 1 + 1) batches of 2 pooled, 2 of them reserved.
  CHECK((*pipeline)->stats().buffers_allocated == 8);
  CHECK((*pipeline)->stats().reserved_bytes == 2u << 20);
  BatchLease lease;
  bool end = false;
  for (uint64_t epoch = 0; epoch < 3; ++epoch) {
    REQUIRE((*pipeline)->StartEpoch(epoch, Plan(source)).ok());
    while ((*pipeline)->Next(&lease, &end).ok() && !end) {
    }
    CHECK(end);
  }
  const PipelineStats stats = (*pipeline)->stats();
  CHECK(stats.samples_read == 48);
  CHECK(stats.buffer_growths == 0);  // every sample went into one of the 2 reserved buffers
  CHECK(stats.buffer_bytes == 0);

  // Reserving fewer than the consumer holds: the others grow once, on first use.
  options.reserve_buffers = 1;
  auto short_pool = Build("threaded", options, env);
  REQUIRE(short_pool.ok());
  CHECK((*short_pool)->stats().reserved_bytes == 1u << 20);
  for (uint64_t epoch = 0; epoch < 3; ++epoch) {
    REQUIRE((*short_pool)->StartEpoch(epoch, Plan(source)).ok());
    while ((*short_pool)->Next(&lease, &end).ok() && !end) {
    }
  }
  CHECK((*short_pool)->stats().buffer_growths == 1);
  CHECK((*short_pool)->stats().buffer_bytes == 1u << 20);
}

// Records which thread read each sample.
class ThreadRecordingSource : public FakeSource {
 public:
  using FakeSource::FakeSource;
  Status Read(SampleRef ref, SampleBuffer* out) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      readers_[ref.file].insert(std::this_thread::get_id());
    }
    return FakeSource::Read(ref, out);
  }
  std::set<std::thread::id> readers_of(uint32_t file) {
    std::lock_guard<std::mutex> lock(mu_);
    return readers_[file];
  }

 private:
  std::mutex mu_;
  std::map<uint32_t, std::set<std::thread::id>> readers_;
};

// Two files' samples alternating, as the sampler interleaves two shards one sample at a time.
std::vector<SampleRef> Alternating(uint64_t samples_per_file) {
  std::vector<SampleRef> plan;
  for (uint64_t i = 0; i < samples_per_file; ++i) {
    plan.push_back({0, i});
    plan.push_back({1, i});
  }
  return plan;
}

TEST_CASE("reader lanes: reader r reads positions r, r + lanes, ... (one shard per thread)") {
  for (const std::string name : {"threaded", "sync"}) {
    for (uint64_t batch_size : {1, 2, 5}) {
      INFO(name << " batch " << batch_size);
      ThreadRecordingSource source(2, 30, 64);
      source.set_delay_us(200);  // both threads stay busy, so either could take any sample
      PipelineOptions options;
      options.batch_size = batch_size;
      options.read_threads = 2;
      options.reader_lanes = 2;
      options.prefetch_size = 4;
      auto pipeline = testing::Make(name, options, &source);
      const auto plan = Alternating(30);
      for (uint64_t epoch = 1; epoch <= 2; ++epoch) {
        REQUIRE(pipeline->StartEpoch(epoch, plan).ok());
        testing::DrainAndCheck(pipeline.get(), source, epoch, plan, batch_size, true);
      }
      const auto file0 = source.readers_of(0), file1 = source.readers_of(1);
      // Each epoch's reads of a file come from one thread (its lane's); threads may differ
      // between epochs only if the pipeline restarted them, which it does not.
      CHECK(file0.size() == 1);
      CHECK(file1.size() == 1);
      CHECK(file0 != file1);
      REQUIRE(pipeline->Stop().ok());
    }
  }
}

TEST_CASE("reader lanes other than 0 or read_threads are refused") {
  FakeSource source(2, 4);
  PipelineOptions options;
  options.read_threads = 2;
  options.reader_lanes = 3;
  PipelineEnv env;
  env.source = &source;
  auto pipeline = Build("threaded", options, env);
  REQUIRE_FALSE(pipeline.ok());
  CHECK_THAT(pipeline.status().ToString(),
             Catch::Contains("reader_lanes (3) must be 0 or read_threads (2)"));
}

TEST_CASE("StartEpoch hands the plan of the epoch before back unfreed, once") {
  FakeSource source(2, 8);
  PipelineOptions options;
  options.batch_size = 4;
  options.read_threads = 1;
  auto pipeline = testing::Make("threaded", options, &source);
  std::vector<SampleRef> first = Plan(source);
  const SampleRef* first_memory = first.data();
  BatchLease lease;
  bool end = false;
  REQUIRE(pipeline->StartEpoch(0, std::move(first)).ok());
  CHECK(pipeline->TakeSpentPlan().empty());  // no epoch before the first
  while (pipeline->Next(&lease, &end).ok() && !end) {
  }
  REQUIRE(end);
  REQUIRE(pipeline->StartEpoch(1, Plan(source)).ok());
  // Epoch 0's plan, in the memory it was handed in (a caller refills it for the next epoch).
  std::vector<SampleRef> spent = pipeline->TakeSpentPlan();
  CHECK(spent.data() == first_memory);
  CHECK(spent == Plan(source));
  CHECK(pipeline->TakeSpentPlan().empty());  // once
  uint64_t samples = 0;
  while (pipeline->Next(&lease, &end).ok() && !end) samples += lease->samples.size();
  CHECK(samples == 16);  // epoch 1 read its own plan
}

TEST_CASE("reserve_landing_bytes makes each reading thread's landing buffer with the pipeline") {
  FakeSource source(2, 8, /*fixed_size=*/1000);
  const uint64_t landing = uint64_t{3} << 20;  // held in 2 MiB huge pages: 4 MiB each
  for (uint64_t threads : {0, 2}) {
    INFO("read_threads " << threads);
    PipelineOptions options;
    options.batch_size = 4;
    options.read_threads = threads;
    options.deliver_sample_bytes = false;  // each reading thread reads into a buffer of its own
    options.reserve_sample_bytes = 1000;
    auto without = testing::Make("threaded", options, &source);
    options.reserve_landing_bytes = landing;
    auto with = testing::Make("threaded", options, &source);
    // The reader threads' landing buffers (the consumer's only when it reads: no threads), on
    // top of the same sample buffers.
    const uint64_t reading = threads == 0 ? 1 : threads;
    CHECK(with->stats().reserved_bytes ==
          without->stats().reserved_bytes + reading * (uint64_t{4} << 20));
    BatchLease lease;
    bool end = false;
    REQUIRE(with->StartEpoch(0, Plan(source)).ok());
    uint64_t samples = 0;
    while (with->Next(&lease, &end).ok() && !end) samples += lease->samples.size();
    CHECK(samples == 16);
  }
}

}  // namespace
}  // namespace dlio
