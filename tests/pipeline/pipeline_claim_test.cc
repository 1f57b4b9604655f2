// Claims of several plan positions at once from the shared cursor (claim_run_bytes): the same
// samples, in the same batches, with the same bytes, as one position a claim.
#include <catch2/catch.hpp>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "dlio/pipeline.h"
#include "pipeline/batch_pipeline_impl.h"
#include "pipeline/fake_source.h"
#include "pipeline/pipeline_test_util.h"

namespace dlio {
namespace {

using testing::FakeSource;

// Records every read in order with the thread that made it. With `rendezvous`, each of the
// first `rendezvous` threads to read waits in its first read until all of them have arrived, so
// that every reader thread takes part.
class SequenceSource final : public FakeSource {
 public:
  SequenceSource(size_t files, uint64_t samples_per_file, uint64_t size, size_t rendezvous)
      : FakeSource(files, samples_per_file, size), rendezvous_(rendezvous) {}
  Status Read(SampleRef ref, SampleBuffer* out) override {
    {
      std::unique_lock<std::mutex> lock(mu_);
      const std::thread::id me = std::this_thread::get_id();
      const bool first = seen_.insert(me).second;
      reads_.emplace_back(me, ref);
      if (first && seen_.size() <= rendezvous_) {
        arrived_.notify_all();
        arrived_.wait(lock, [&] { return seen_.size() >= rendezvous_; });
      }
    }
    return FakeSource::Read(ref, out);
  }
  std::vector<std::pair<std::thread::id, SampleRef>> Take() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::move(reads_);
  }

 private:
  const size_t rendezvous_;
  std::mutex mu_;
  std::condition_variable arrived_;
  std::set<std::thread::id> seen_;
  std::vector<std::pair<std::thread::id, SampleRef>> reads_;
};

// The position of every sample in a plan over `source` in file order (MakePlan without shuffle).
uint64_t PositionOf(const FakeSource& source, const SampleRef& ref) {
  return ref.file * source.samples_per_file()[0] + ref.index;
}

// Runs one epoch of the plan in file order (every batch checked against it, DrainAndCheck) and
// returns the reads the source saw.
std::vector<std::pair<std::thread::id, SampleRef>> ReadEpoch(SequenceSource* source,
                                                             const std::string& pipeline_name,
                                                             PipelineOptions options) {
  auto pipeline = testing::Make(pipeline_name, options, source);
  const auto plan = testing::MakePlan(*source, 0);
  REQUIRE(pipeline->StartEpoch(0, plan).ok());
  testing::DrainAndCheck(pipeline.get(), *source, 0, plan, options.batch_size, false);
  CHECK(pipeline->stats().samples_read == plan.size());
  REQUIRE(pipeline->Stop().ok());
  return source->Take();
}

TEST_CASE("claim runs: one reader reads the plan in the same order with and without runs") {
  const std::string name = GENERATE(as<std::string>{}, "threaded", "sync");
  const uint64_t claim = GENERATE(uint64_t{0}, uint64_t{256}, uint64_t{64} << 10);
  CAPTURE(name, claim);
  SequenceSource source(3, 50, 64, 0);  // 150 samples of 64 bytes
  PipelineOptions options;
  options.batch_size = 16;  // the last batch holds 6
  options.drop_last = false;
  options.read_threads = 1;
  options.claim_run_bytes = claim;
  const auto reads = ReadEpoch(&source, name, options);
  const auto plan = testing::MakePlan(source, 0);
  REQUIRE(reads.size() == plan.size());
  for (size_t i = 0; i < plan.size(); ++i) CHECK(reads[i].second == plan[i]);
}

TEST_CASE("claim runs: a claim's length, one reader only") {
  using pipeline_internal::ClaimRunLength;
  CHECK(ClaimRunLength(64 << 10, 1, 1024) == 64);
  CHECK(ClaimRunLength(64 << 10, 1, 2048) == 32);
  CHECK(ClaimRunLength(64 << 10, 1, 100) == 64);     // at most 64
  CHECK(ClaimRunLength(64 << 10, 1, 40000) == 1);    // 65536 / 40000
  CHECK(ClaimRunLength(64 << 10, 1, 1 << 20) == 1);  // larger than the run
  CHECK(ClaimRunLength(64 << 10, 1, 0) == 1);        // size not known yet
  CHECK(ClaimRunLength(0, 1, 1024) == 1);            // off
  CHECK(ClaimRunLength(64 << 10, 2, 1024) == 1);     // several readers: one position a claim
  CHECK(ClaimRunLength(64 << 10, 4, 64) == 1);
}

TEST_CASE("claim runs: several readers read every position once, each in plan order") {
  const uint64_t threads = GENERATE(2, 3);
  CAPTURE(threads);
  SequenceSource source(4, 64, 64, threads);  // 256 samples of 64 bytes
  PipelineOptions options;
  options.batch_size = 32;
  options.read_threads = threads;
  options.prefetch_size = 2;
  options.claim_run_bytes = 64 << 10;  // with one reader: 64 positions a claim
  const auto reads = ReadEpoch(&source, "threaded", options);
  std::map<std::thread::id, std::vector<uint64_t>> by_thread;
  std::multiset<uint64_t> positions;
  for (const auto& [thread, ref] : reads) {
    by_thread[thread].push_back(PositionOf(source, ref));
    positions.insert(PositionOf(source, ref));
  }
  CHECK(by_thread.size() == threads);  // the rendezvous made every reader read
  REQUIRE(positions.size() == 256);
  for (uint64_t p = 0; p < 256; ++p) CHECK(positions.count(p) == 1);
  // Each reader claims positions in increasing order.
  for (const auto& [thread, list] : by_thread) {
    for (size_t i = 1; i < list.size(); ++i) CHECK(list[i] > list[i - 1]);
  }
}

}  // namespace
}  // namespace dlio
