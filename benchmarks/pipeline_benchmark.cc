// Hand-off cost of the threaded pipeline: a DataSource that returns a tiny sample without I/O, so
// what is measured is claiming, batching, ordering and handing batches to the consumer.
#include <benchmark/benchmark.h>

#include <cstring>
#include <string>
#include <vector>

#include "dlio/pipeline.h"
#include "dlio/registries.h"

namespace {

class TinySource : public dlio::DataSource {
 public:
  explicit TinySource(uint64_t samples) : samples_{samples}, path_("mem/tiny") {}
  size_t num_files() const override { return 1; }
  const std::string& file_path(uint32_t) const override { return path_; }
  const std::vector<uint64_t>& samples_per_file() const override { return samples_; }
  dlio::Status Read(dlio::SampleRef ref, dlio::SampleBuffer* out) override {
    DLIO_RETURN_NOT_OK(out->Resize(sizeof(ref.index)));
    std::memcpy(out->data(), &ref.index, sizeof(ref.index));
    return dlio::Status::OK();
  }

 private:
  std::vector<uint64_t> samples_;
  std::string path_;
};

// Args: read_threads, batch_size.
void BM_ThreadedHandOff(benchmark::State& state) {
  constexpr uint64_t kSamples = 100000;
  TinySource source(kSamples);
  dlio::Registries registries;
  if (!dlio::RegisterBuiltinPipelines(&registries.pipelines).ok()) {
    state.SkipWithError("registration failed");
    return;
  }
  dlio::PipelineOptions options;
  options.read_threads = static_cast<uint64_t>(state.range(0));
  options.batch_size = static_cast<uint64_t>(state.range(1));
  options.computation_threads = 1;
  options.prefetch_size = 4;
  dlio::PipelineEnv env;
  env.source = &source;
  auto pipeline = (*registries.pipelines.Get("threaded"))(options, env);
  if (!pipeline.ok()) {
    state.SkipWithError(pipeline.status().ToString().c_str());
    return;
  }
  std::vector<dlio::SampleRef> plan(kSamples);
  for (uint64_t i = 0; i < kSamples; ++i) plan[i] = {0, i};
  uint64_t samples = 0, checksum = 0;
  for (auto _ : state) {
    if (!(*pipeline)->StartEpoch(0, plan).ok()) {
      state.SkipWithError("StartEpoch failed");
      break;
    }
    dlio::BatchLease lease;
    bool end = false;
    while ((*pipeline)->Next(&lease, &end).ok() && !end) {
      samples += lease->samples.size();
      checksum += lease->samples.front().data[0];
    }
  }
  benchmark::DoNotOptimize(checksum);
  state.SetItemsProcessed(static_cast<int64_t>(samples));
  state.counters["time_per_sample"] = benchmark::Counter(
      static_cast<double>(samples), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_ThreadedHandOff)
    ->ArgNames({"read_threads", "batch"})
    ->Args({1, 1})
    ->Args({2, 1})
    ->Args({1, 32})
    ->Args({2, 32})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
