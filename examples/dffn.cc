// DFFN, Flood-Filling Networks (DLIO paper): random reads of 64 KB chunks of a shared HDF5 file,
// each sample first looked up in the file's metadata file (~100 B requests), every rank reading
// a third of the data, I/O and compute in separate phases.
//
//   dffn [--dir DIR] [--set key=value ...]     (parameters: the dffn preset)
#include "paper_workload.h"

namespace {

dlio::Status Run(example::Workload* w) {
  const dlio::WorkloadConfig& c = w->config;
  DLIO_RETURN_NOT_OK(example::Generate(w));  // the data file and <file>.meta.h5

  // DataSource: with dataset.metadata_file the hdf5 reader consults <file>.meta.h5 per sample.
  DLIO_ASSIGN_OR_RETURN(auto source, example::MakeSource(w));

  // Sampler: every rank sees the whole file (sharding none), shuffled per rank and epoch, and
  // keeps the first reader.read_fraction (a third) of it.
  DLIO_ASSIGN_OR_RETURN(dlio::SamplerOptions so, dlio::SamplerOptionsFor(c, 0));
  std::printf("sampler: %s, sharding %s, fraction %.4f\n", so.name.c_str(),
              dlio::ShardingName(so.sharding), so.fraction);
  DLIO_ASSIGN_OR_RETURN(auto sampler, dlio::MakeSampler(so));

  // Pipeline "sync": the batch is read, then the step computes.
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

  std::vector<dlio::SampleRef> plan;
  for (uint64_t epoch = 0; epoch < c.train.epochs; ++epoch) {
    DLIO_RETURN_NOT_OK(sampler->Plan({epoch, 0, 1, &source->samples_per_file()}, &plan));
    const uint64_t steps = example::StepsOf(c, plan.size());
    std::printf("epoch %llu reads %llu of %llu samples\n",
                static_cast<unsigned long long>(epoch + 1),
                static_cast<unsigned long long>(steps * c.reader.batch_size),
                static_cast<unsigned long long>(c.dataset.num_samples_per_file));
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
    }
    batch.reset();
    example::PrintEpoch(epoch + 1, records, w->clock->NowNanos() - start,
                        c.train.excluded_start_steps);
  }
  return pipeline->Stop();
}

}  // namespace

int main(int argc, char** argv) { return example::Main("dffn", argc, argv, Run); }
