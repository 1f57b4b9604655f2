// Cost of planning an epoch (1M samples) and of drawing a step/preprocess time.
#include <benchmark/benchmark.h>

#include <vector>

#include "dlio/distribution.h"
#include "dlio/sampler.h"

namespace dlio {
namespace {

// 1024 files x 1024 samples = 1,048,576 samples, planned for rank 0 of state.range(0) ranks.
void PlanEpoch(benchmark::State& state, const char* name, ShuffleMode file_shuffle,
               ShuffleMode sample_shuffle) {
  SamplerOptions o;
  o.name = name;
  o.file_shuffle = file_shuffle;
  o.sample_shuffle = sample_shuffle;
  auto sampler = MakeSampler(o);
  if (!sampler.ok()) {
    state.SkipWithError(sampler.status().ToString().c_str());
    return;
  }
  const std::vector<uint64_t> files(1024, 1024);
  PlanRequest r;
  r.samples_per_file = &files;
  r.world = static_cast<int>(state.range(0));
  std::vector<SampleRef> out;
  for (auto _ : state) {
    r.epoch++;
    Status st = (*sampler)->Plan(r, &out);
    if (!st.ok()) state.SkipWithError(st.ToString().c_str());
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(out.size()));
}

void BM_PlanSequential(benchmark::State& s) {
  PlanEpoch(s, "sequential", ShuffleMode::kOff, ShuffleMode::kOff);
}
void BM_PlanFileShuffle(benchmark::State& s) {
  PlanEpoch(s, "shuffle", ShuffleMode::kSeed, ShuffleMode::kOff);
}
void BM_PlanSampleShuffle(benchmark::State& s) {
  PlanEpoch(s, "shuffle", ShuffleMode::kSeed, ShuffleMode::kSeed);
}
void BM_PlanShuffleBuffer(benchmark::State& s) {
  PlanEpoch(s, "shuffle_buffer", ShuffleMode::kSeed, ShuffleMode::kSeed);
}
BENCHMARK(BM_PlanSequential)->Arg(1)->Arg(8)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PlanFileShuffle)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PlanSampleShuffle)->Arg(1)->Arg(8)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PlanShuffleBuffer)->Arg(1)->Unit(benchmark::kMillisecond);

void DrawNext(benchmark::State& state, DistributionSpec::Type type) {
  DistributionSpec spec;
  spec.type = type;
  spec.mean = 0.5;
  spec.stdev = 0.1;
  spec.max = 1.0;
  Distribution d(spec, 42);
  for (auto _ : state) benchmark::DoNotOptimize(d.Next());
}
void BM_DistributionConstant(benchmark::State& s) {
  DrawNext(s, DistributionSpec::Type::kConstant);
}
void BM_DistributionNormal(benchmark::State& s) { DrawNext(s, DistributionSpec::Type::kNormal); }
void BM_DistributionUniform(benchmark::State& s) { DrawNext(s, DistributionSpec::Type::kUniform); }
void BM_DistributionGamma(benchmark::State& s) { DrawNext(s, DistributionSpec::Type::kGamma); }
void BM_DistributionPoisson(benchmark::State& s) { DrawNext(s, DistributionSpec::Type::kPoisson); }
BENCHMARK(BM_DistributionConstant);
BENCHMARK(BM_DistributionNormal);
BENCHMARK(BM_DistributionUniform);
BENCHMARK(BM_DistributionGamma);
BENCHMARK(BM_DistributionPoisson);

void BM_MixSeed(benchmark::State& state) {
  uint64_t x = 1;
  for (auto _ : state) benchmark::DoNotOptimize(x = MixSeed(x, 2, 3, 4));
}
BENCHMARK(BM_MixSeed);

}  // namespace
}  // namespace dlio

BENCHMARK_MAIN();
