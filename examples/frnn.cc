// FRNN, fusion recurrent neural network (DLIO paper): 2 KB samples from 2 MB NPZ "signal" files
// taken in random file order, each file in order; before each step many ~100 B reads of a
// metadata ("signal shots") file, then the batch, read with several threads; no overlap.
//
//   frnn [--dir DIR] [--set key=value ...]     (parameters: the frnn preset)
#include "dlio/side_io.h"
#include "paper_workload.h"

namespace {

dlio::Status Run(example::Workload* w) {
  const dlio::WorkloadConfig& c = w->config;
  DLIO_RETURN_NOT_OK(example::Generate(w));

  // The metadata file and its reads (side_io.*): generated beside the data, read before each step
  // through the same storage, so its requests are traced and counted with the data's.
  DLIO_ASSIGN_OR_RETURN(dlio::SideIoOptions side_options, dlio::SideIoOptionsFor(c, 0));
  DLIO_RETURN_NOT_OK(dlio::GenerateSideFile(side_options, w->registries, w->storage.get()));
  DLIO_ASSIGN_OR_RETURN(auto side, dlio::SideIo::Make(side_options, w->storage.get()));

  DLIO_ASSIGN_OR_RETURN(auto source, example::MakeSource(w));

  // Sampler: files shuffled, samples in file order; block sharding gives a rank whole files.
  DLIO_ASSIGN_OR_RETURN(dlio::SamplerOptions so, dlio::SamplerOptionsFor(c, 0));
  DLIO_ASSIGN_OR_RETURN(auto sampler, dlio::MakeSampler(so));

  // Pipeline "sync" with several read threads: they read the batch in parallel inside Next,
  // nothing ahead of it.
  dlio::PipelineOptions po;
  po.name = "sync";
  po.batch_size = c.reader.batch_size;
  po.read_threads = c.reader.read_threads;
  po.computation_threads = 0;
  DLIO_ASSIGN_OR_RETURN(auto factory, w->registries.pipelines.Get(po.name));
  DLIO_ASSIGN_OR_RETURN(auto pipeline, factory(po, {source.get(), w->clock, w->tracer.get()}));

  dlio::ComputeOptions co;
  co.time = c.train.computation_time;
  co.seed = dlio::MixSeed(c.train.seed, 0, 0xc0);
  DLIO_ASSIGN_OR_RETURN(auto compute, dlio::MakeComputeEmulator(co, w->clock));

  DLIO_RETURN_NOT_OK(side->BeforeTraining());
  std::vector<dlio::SampleRef> plan;
  uint64_t global_step = 0;
  for (uint64_t epoch = 0; epoch < c.train.epochs; ++epoch) {
    DLIO_RETURN_NOT_OK(sampler->Plan({epoch, 0, 1, &source->samples_per_file()}, &plan));
    const uint64_t steps = example::StepsOf(c, plan.size());
    plan.resize(steps * c.reader.batch_size);
    DLIO_RETURN_NOT_OK(pipeline->StartEpoch(epoch, plan));
    std::vector<dlio::StepRecord> records;
    const int64_t start = w->clock->NowNanos();
    dlio::BatchLease batch;
    for (uint64_t s = 0; s < steps; ++s, ++global_step) {
      dlio::StepRecord rec;
      const int64_t t0 = w->clock->NowNanos();
      DLIO_RETURN_NOT_OK(side->BeforeStep(global_step));  // the signal-shot lookups
      bool end = false;
      DLIO_RETURN_NOT_OK(pipeline->Next(&batch, &end));  // then the batch
      const int64_t t1 = w->clock->NowNanos();
      compute->Step(static_cast<int64_t>(s));
      rec.load_ns = t1 - t0;
      rec.compute_ns = w->clock->NowNanos() - t1;
      rec.samples = batch->samples.size();
      rec.bytes = batch->bytes;
      records.push_back(rec);
    }
    batch.reset();
    example::PrintEpoch(epoch + 1, records, w->clock->NowNanos() - start,
                        c.train.excluded_start_steps);
  }
  DLIO_RETURN_NOT_OK(side->AfterTraining());
  std::printf("metadata reads: %llu of %llu bytes\n",
              static_cast<unsigned long long>(side->reads_done()),
              static_cast<unsigned long long>(side_options.read_size));
  return pipeline->Stop();
}

}  // namespace

int main(int argc, char** argv) { return example::Main("frnn", argc, argv, Run); }
