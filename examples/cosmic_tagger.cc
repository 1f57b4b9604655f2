// Cosmic Tagger (DLIO paper): a UNet whose one I/O thread reads a shared, 2 KB-chunked HDF5 file
// sequentially *before* each step (no overlap with compute), checkpointing every 50 steps.
//
//   cosmic_tagger [--dir DIR] [--set key=value ...]     (parameters: the cosmic_tagger preset)
#include "dlio/checkpointer.h"
#include "paper_workload.h"

namespace {

dlio::Status Run(example::Workload* w) {
  const dlio::WorkloadConfig& c = w->config;
  DLIO_RETURN_NOT_OK(example::Generate(w));

  // DataSource: the hdf5 reader over the one shared file (HDF5 reads whole 2 KB chunks).
  DLIO_ASSIGN_OR_RETURN(auto source, example::MakeSource(w));

  // Sampler: the file in order (no shuffle), this rank's block of it.
  DLIO_ASSIGN_OR_RETURN(dlio::SamplerOptions sampler_options, dlio::SamplerOptionsFor(c, 0));
  DLIO_ASSIGN_OR_RETURN(auto sampler, dlio::MakeSampler(sampler_options));

  // Pipeline "sync" with one read thread: Next() reads the batch on this thread, so I/O and
  // compute take turns, as in the application.
  dlio::PipelineOptions po;
  po.name = "sync";
  po.batch_size = c.reader.batch_size;
  po.read_threads = c.reader.read_threads;
  po.computation_threads = 0;
  DLIO_ASSIGN_OR_RETURN(auto pipeline_factory, w->registries.pipelines.Get(po.name));
  DLIO_ASSIGN_OR_RETURN(auto pipeline,
                        pipeline_factory(po, {source.get(), w->clock, w->tracer.get()}));

  dlio::ComputeOptions co;
  co.time = c.train.computation_time;
  co.seed = dlio::MixSeed(c.train.seed, 0, 0xc0);
  DLIO_ASSIGN_OR_RETURN(auto compute, dlio::MakeComputeEmulator(co, w->clock));

  // Checkpointer: the paper's five files (1 KiB, 1 KiB, 4 KiB, 64 KiB, 4 MiB) every
  // checkpoint.steps_between_checkpoints steps.
  dlio::CheckpointOptions ko;
  ko.name = "paper";
  ko.folder = c.checkpoint.checkpoint_folder;
  DLIO_ASSIGN_OR_RETURN(auto checkpointer_factory, w->registries.checkpointers.Get(ko.name));
  DLIO_ASSIGN_OR_RETURN(auto checkpointer,
                        checkpointer_factory(ko, {w->storage.get(), w->clock, w->tracer.get()}));

  std::vector<dlio::SampleRef> plan;
  uint64_t global_step = 0, checkpoints = 0;
  for (uint64_t epoch = 0; epoch < c.train.epochs; ++epoch) {
    DLIO_RETURN_NOT_OK(sampler->Plan({epoch, 0, 1, &source->samples_per_file()}, &plan));
    const uint64_t steps = example::StepsOf(c, plan.size());
    plan.resize(steps * c.reader.batch_size);
    DLIO_RETURN_NOT_OK(pipeline->StartEpoch(epoch, plan));
    std::vector<dlio::StepRecord> records;
    const int64_t start = w->clock->NowNanos();
    int64_t checkpoint_ns = 0;
    dlio::BatchLease batch;
    for (uint64_t s = 0; s < steps; ++s) {
      dlio::StepRecord rec;
      const int64_t t0 = w->clock->NowNanos();
      bool end = false;
      DLIO_RETURN_NOT_OK(pipeline->Next(&batch, &end));  // reads the whole batch now
      const int64_t t1 = w->clock->NowNanos();
      compute->Step(static_cast<int64_t>(s));
      rec.load_ns = t1 - t0;
      rec.compute_ns = w->clock->NowNanos() - t1;
      rec.samples = batch->samples.size();
      rec.bytes = batch->bytes;
      records.push_back(rec);
      batch.reset();
      if (++global_step % static_cast<uint64_t>(c.checkpoint.steps_between_checkpoints) == 0) {
        const int64_t k0 = w->clock->NowNanos();
        DLIO_RETURN_NOT_OK(checkpointer->Save(epoch, static_cast<int64_t>(global_step)).status());
        checkpoint_ns += w->clock->NowNanos() - k0;
        ++checkpoints;
      }
    }
    example::PrintEpoch(epoch + 1, records, w->clock->NowNanos() - start - checkpoint_ns,
                        c.train.excluded_start_steps);
  }
  std::printf("checkpoints: %llu\n", static_cast<unsigned long long>(checkpoints));
  return pipeline->Stop();
}

}  // namespace

int main(int argc, char** argv) { return example::Main("cosmic_tagger", argc, argv, Run); }
