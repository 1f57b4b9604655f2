// A reader whose buffer holds a view of a block of samples (a parquet row group) takes the
// claimed samples that follow in that block as views at once (BatchPipeline::ViewsInRun,
// DataSource::ViewsOfHeld) instead of one ReadWith each: the same batches, bytes, read times and
// counts, fewer calls; traced, every sample is still read and traced on its own.
#include <atomic>
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "dlio/pipeline.h"
#include "dlio/tracer.h"
#include "fake_clock.h"
#include "pipeline/fake_source.h"
#include "pipeline/pipeline_test_util.h"

namespace dlio {
namespace {

using testing::FakeSource;

// FakeSource's files in blocks of kBlock samples of kSize bytes, each block one piece of memory.
// A read into a buffer that allows views is a view of its block (kept alive by the buffer) and
// moves the clock by 10 ns; ViewsOfHeld serves the next samples of the block the buffer holds
// (unless `views` is off) and moves no clock.
class BlockSource final : public FakeSource {
 public:
  static constexpr uint64_t kBlock = 8, kSize = 64;
  BlockSource(size_t files, uint64_t samples_per_file, testing::FakeClock* clock, bool views)
      : FakeSource(files, samples_per_file, kSize), clock_(clock), views_(views) {
    for (uint32_t f = 0; f < files; ++f) {
      for (uint64_t b = 0; b * kBlock < samples_per_file; ++b) {
        auto block = std::make_shared<Block>();
        block->file = f;
        block->first = b * kBlock;
        block->bytes.resize(kBlock * kSize);
        for (uint64_t i = 0; i < kBlock; ++i) {
          for (uint64_t k = 0; k < kSize; ++k) {
            block->bytes[i * kSize + k] = ByteAt(SampleRef{f, block->first + i}, k);
          }
        }
        blocks_.push_back(block);
      }
    }
  }

  Status Read(SampleRef ref, SampleBuffer* out) override {
    if (!out->views_allowed()) return FakeSource::Read(ref, out);
    reads_.fetch_add(1);
    clock_->Advance(10);
    const auto& block = BlockOf(ref);
    out->SetView(block->bytes.data() + (ref.index - block->first) * kSize, kSize, block);
    return Status::OK();
  }

  uint64_t ViewsOfHeld(SampleRef first, uint64_t n, SampleBuffer* out, DataSourceCursor* cursor,
                       SampleSpan* spans) override {
    (void)cursor;
    calls_.fetch_add(1);
    const auto& block = BlockOf(first);
    if (!views_ || out->view_keeper() != block.get()) return 0;
    n = std::min(n, block->first + kBlock - first.index);
    for (uint64_t r = 0; r < n; ++r) {
      spans[r] = SampleSpan{block->bytes.data() + (first.index + r - block->first) * kSize, kSize};
    }
    out->MoveView(spans[n - 1].data, kSize);
    served_.fetch_add(n);
    return n;
  }

  // Where sample `ref`'s bytes lie in its block.
  const uint8_t* Where(SampleRef ref) const {
    const auto& block = BlockOf(ref);
    return block->bytes.data() + (ref.index - block->first) * kSize;
  }
  uint64_t view_reads() const { return reads_.load(); }
  uint64_t calls() const { return calls_.load(); }
  uint64_t served() const { return served_.load(); }

 private:
  struct Block {
    uint32_t file = 0;
    uint64_t first = 0;
    std::vector<uint8_t> bytes;
  };
  const std::shared_ptr<Block>& BlockOf(SampleRef ref) const {
    return blocks_[ref.file * (samples_per_file()[0] / kBlock) + ref.index / kBlock];
  }

  testing::FakeClock* clock_;
  const bool views_;
  std::vector<std::shared_ptr<Block>> blocks_;
  std::atomic<uint64_t> reads_{0}, calls_{0}, served_{0};
};

struct EpochSeen {
  uint64_t samples = 0;  // delivered, each a view of its own bytes in its block
  std::vector<int64_t> read_ns;
  uint64_t bytes = 0, samples_read = 0;
};

// One epoch of 2 files x 64 samples in file order, batches of 32, one reader thread whose
// consumer reads no byte (the reader's buffer allows views), each batch checked against the plan.
EpochSeen ReadBlockEpoch(BlockSource* source, testing::FakeClock* clock, Tracer* tracer) {
  PipelineOptions options;
  options.batch_size = 32;
  options.read_threads = 1;
  options.computation_threads = 0;
  options.deliver_sample_bytes = false;
  auto pipeline = testing::Make("threaded", options, source, tracer, clock);
  const auto plan = testing::MakePlan(*source, 0);
  REQUIRE(plan.size() == 128);
  REQUIRE(pipeline->StartEpoch(0, plan).ok());
  EpochSeen seen;
  BatchLease lease;
  bool end = false;
  while (true) {
    REQUIRE(pipeline->Next(&lease, &end).ok());
    if (end) break;
    for (const Sample& s : lease->samples) {
      REQUIRE(s.ref == plan[seen.samples]);
      REQUIRE(source->Matches(s.ref, s.data, s.size));
      REQUIRE(s.data == source->Where(s.ref));
      ++seen.samples;
    }
    seen.read_ns.push_back(lease->read_ns);
    seen.bytes += lease->bytes;
    lease.reset();
  }
  seen.samples_read = pipeline->stats().samples_read;
  REQUIRE(pipeline->Stop().ok());
  return seen;
}

TEST_CASE("views of held samples: the same batches and read times as one read each") {
  testing::FakeClock clock_off, clock_on;
  BlockSource off(2, 64, &clock_off, false), on(2, 64, &clock_on, true);
  const EpochSeen one_by_one = ReadBlockEpoch(&off, &clock_off, nullptr);
  const EpochSeen at_once = ReadBlockEpoch(&on, &clock_on, nullptr);
  CHECK(at_once.samples == 128);
  CHECK(one_by_one.samples == 128);
  CHECK(at_once.bytes == 128 * 64);
  CHECK(one_by_one.bytes == 128 * 64);
  CHECK(at_once.samples_read == 128);
  CHECK(one_by_one.samples_read == 128);
  // Only reads move the clock, 10 ns each: one by one, a batch's 32 reads span 320 ns.
  CHECK(one_by_one.read_ns == std::vector<int64_t>(4, 320));
  CHECK(off.view_reads() == 128);
  // At once: batch 0 reads position 0 (a claim of one: no size known yet), then claims the rest
  // of the batch and reads 1, 8, 16 and 24, each followed by the rest of its block as views;
  // batches 1-3 read each block's first sample only. 5 + 4 + 4 + 4 reads; a batch's time spans
  // its reads.
  CHECK(on.view_reads() == 17);
  CHECK(on.served() == 128 - 17);
  CHECK(at_once.read_ns == std::vector<int64_t>{50, 40, 40, 40});
}

TEST_CASE("views of held samples: traced, every sample is read and traced on its own") {
  testing::FakeClock clock;
  BlockSource on(2, 64, &clock, true);
  MemoryTracer tracer;
  const EpochSeen seen = ReadBlockEpoch(&on, &clock, &tracer);
  CHECK(seen.samples_read == 128);
  CHECK(on.calls() == 0);
  CHECK(on.view_reads() == 128);
  uint64_t items = 0;
  for (const TraceEvent& e : tracer.Events()) items += std::string(e.name) == "item" ? 1 : 0;
  CHECK(items == 128);
}

}  // namespace
}  // namespace dlio
