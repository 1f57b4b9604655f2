// CosmoFlow (DLIO paper): file-per-process TFRecord, 16 MiB samples streamed in 256 KB requests
// by 4 read threads, 8 preprocessing threads (~11% of the time), all of it hidden behind compute.
//
//   cosmoflow [--dir DIR] [--set key=value ...]     (parameters: the cosmoflow preset)
#include "paper_workload.h"

namespace {

dlio::Status Run(example::Workload* w) {
  const dlio::WorkloadConfig& c = w->config;
  DLIO_RETURN_NOT_OK(example::Generate(w));

  // DataSource: the tfrecord reader streams each file in reader.transfer_size (256 KB) requests.
  DLIO_ASSIGN_OR_RETURN(auto source, example::MakeSource(w));

  // Sampler: files shuffled each epoch; with block sharding a rank reads whole files.
  DLIO_ASSIGN_OR_RETURN(dlio::SamplerOptions so, dlio::SamplerOptionsFor(c, 0));
  DLIO_ASSIGN_OR_RETURN(auto sampler, dlio::MakeSampler(so));

  // Pipeline "threaded": read threads and preprocessing threads work ahead of the loop, up to
  // prefetch_size batches, so the loop only waits when I/O falls behind.
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
      DLIO_RETURN_NOT_OK(pipeline->Next(&batch, &end));  // usually ready: read while computing
      const int64_t t1 = w->clock->NowNanos();
      compute->Step(static_cast<int64_t>(s));
      rec.load_ns = t1 - t0;
      rec.compute_ns = w->clock->NowNanos() - t1;
      rec.samples = batch->samples.size();
      rec.bytes = batch->bytes;
      records.push_back(rec);
      batch.reset();  // the step is done with its input: the pipeline may refill the buffers
    }
    example::PrintEpoch(epoch + 1, records, w->clock->NowNanos() - start,
                        c.train.excluded_start_steps);
  }
  return pipeline->Stop();
}

}  // namespace

int main(int argc, char** argv) { return example::Main("cosmoflow", argc, argv, Run); }
