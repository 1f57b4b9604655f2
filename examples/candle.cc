// CANDLE (DLIO paper): every rank loads the whole CSV (1,120 rows of 65,536 float32 values, ~256 KB
// of values per row) into memory before training, then trains 60 epochs from memory.
//
//   candle [--dir DIR] [--set key=value ...]     (parameters: the candle preset)
#include "paper_workload.h"

namespace {

dlio::Status Run(example::Workload* w) {
  const dlio::WorkloadConfig& c = w->config;
  DLIO_RETURN_NOT_OK(example::Generate(w));

  // DataSource: the csv reader indexes the rows at open, then reads a row per sample in
  // reader.transfer_size (256 KB) requests.
  DLIO_ASSIGN_OR_RETURN(auto source, example::MakeSource(w));

  // Sampler: sharding none, so every rank's plan is the whole file (pandas.read_csv on each rank).
  DLIO_ASSIGN_OR_RETURN(dlio::SamplerOptions so, dlio::SamplerOptionsFor(c, 0));
  DLIO_ASSIGN_OR_RETURN(auto sampler, dlio::MakeSampler(so));

  // Pipeline "preload": the first StartEpoch reads every planned sample into memory; Next then
  // hands out batches without I/O, for all 60 epochs.
  DLIO_ASSIGN_OR_RETURN(auto pipeline,
                        example::MakePipeline(w, "preload", source.get(), /*preprocess=*/false));
  DLIO_ASSIGN_OR_RETURN(auto compute, example::MakeCompute(w));

  std::vector<dlio::SampleRef> plan;
  const dlio::IoStats before = w->storage->stats();
  dlio::IoStats loaded;
  int64_t load_ns = 0, compute_ns = 0;
  for (uint64_t epoch = 0; epoch < c.train.epochs; ++epoch) {
    DLIO_RETURN_NOT_OK(sampler->Plan({epoch, 0, 1, &source->samples_per_file()}, &plan));
    const uint64_t steps = example::StepsOf(c, plan.size());
    plan.resize(steps * c.reader.batch_size);
    const int64_t t = w->clock->NowNanos();
    DLIO_RETURN_NOT_OK(pipeline->StartEpoch(epoch, plan));  // epoch 0: loads the file
    load_ns += w->clock->NowNanos() - t;
    if (epoch == 0) {
      loaded = w->storage->stats();
      std::printf("loaded into memory: %llu bytes in %llu reads\n",
                  static_cast<unsigned long long>(loaded.read_bytes - before.read_bytes),
                  static_cast<unsigned long long>(loaded.read_ops - before.read_ops));
    }
    dlio::BatchLease batch;
    for (uint64_t s = 0; s < steps; ++s) {
      bool end = false;
      const int64_t t0 = w->clock->NowNanos();
      DLIO_RETURN_NOT_OK(pipeline->Next(&batch, &end));  // from memory
      const int64_t t1 = w->clock->NowNanos();
      compute->Step(static_cast<int64_t>(s));
      load_ns += t1 - t0;
      compute_ns += w->clock->NowNanos() - t1;
    }
  }
  const dlio::IoStats end = w->storage->stats();
  std::printf("%llu epochs: load %.3f s, compute %.3f s, reads after loading: %llu\n",
              static_cast<unsigned long long>(c.train.epochs), load_ns * 1e-9, compute_ns * 1e-9,
              static_cast<unsigned long long>(end.read_ops - loaded.read_ops));
  return pipeline->Stop();
}

}  // namespace

int main(int argc, char** argv) { return example::Main("candle", argc, argv, Run); }
