// Imagenet (DLIO paper): TFRecord files of ~256 KB serialized images, files in random order and
// each read sequentially in 256 KB requests by 2 pipeline threads (tf.data's interleave), 4
// preprocessing threads, all overlapping compute; 100 steps after 10 warm-up steps.
//
//   imagenet [--dir DIR] [--set key=value ...]     (parameters: the imagenet preset)
#include "paper_workload.h"

namespace {

dlio::Status Run(example::Workload* w) {
  const dlio::WorkloadConfig& c = w->config;
  DLIO_RETURN_NOT_OK(example::Generate(w));
  DLIO_ASSIGN_OR_RETURN(auto source, example::MakeSource(w));

  // Sampler: files shuffled, samples in order, reader.file_interleave files at a time, one sample
  // of each in turn (interleave(cycle_length=2)): each read thread streams its own file.
  DLIO_ASSIGN_OR_RETURN(dlio::SamplerOptions so, dlio::SamplerOptionsFor(c, 0));
  DLIO_ASSIGN_OR_RETURN(auto sampler, dlio::MakeSampler(so));

  dlio::PipelineOptions po;
  po.name = "threaded";
  po.batch_size = c.reader.batch_size;
  po.read_threads = c.reader.read_threads;
  po.computation_threads = c.reader.computation_threads;
  po.prefetch_size = c.reader.prefetch_size;
  po.preprocess_time = c.reader.preprocess_time;
  po.seed = dlio::MixSeed(c.train.seed, 0, 0x77);
  DLIO_ASSIGN_OR_RETURN(auto factory, w->registries.pipelines.Get(po.name));
  DLIO_ASSIGN_OR_RETURN(auto pipeline, factory(po, {source.get(), w->clock, w->tracer.get()}));

  dlio::ComputeOptions co;
  co.time = c.train.computation_time;
  co.seed = dlio::MixSeed(c.train.seed, 0, 0xc0);
  DLIO_ASSIGN_OR_RETURN(auto compute, dlio::MakeComputeEmulator(co, w->clock));

  std::vector<dlio::SampleRef> plan;
  for (uint64_t epoch = 0; epoch < c.train.epochs; ++epoch) {
    DLIO_RETURN_NOT_OK(sampler->Plan({epoch, 0, 1, &source->samples_per_file()}, &plan));
    const uint64_t steps = example::StepsOf(c, plan.size());
    plan.resize(steps * c.reader.batch_size);
    DLIO_RETURN_NOT_OK(pipeline->StartEpoch(epoch, plan));
    std::vector<dlio::StepRecord> records;
    const int64_t start = w->clock->NowNanos();
    dlio::BatchLease batch;
    for (uint64_t s = 0; s < steps; ++s) {
      dlio::StepRecord rec;
      const int64_t t0 = w->clock->NowNanos();
      bool end = false;
      DLIO_RETURN_NOT_OK(pipeline->Next(&batch, &end));
      const int64_t t1 = w->clock->NowNanos();
      compute->Step(static_cast<int64_t>(s));
      rec.load_ns = t1 - t0;
      rec.compute_ns = w->clock->NowNanos() - t1;
      rec.samples = batch->samples.size();
      rec.bytes = batch->bytes;
      records.push_back(rec);
      batch.reset();
    }
    // The warm-up steps (train.excluded_start_steps) are left out of AU and throughput.
    example::PrintEpoch(epoch + 1, records, w->clock->NowNanos() - start,
                        c.train.excluded_start_steps);
  }
  return pipeline->Stop();
}

}  // namespace

int main(int argc, char** argv) { return example::Main("imagenet", argc, argv, Run); }
