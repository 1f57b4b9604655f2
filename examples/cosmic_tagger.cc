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
  DLIO_ASSIGN_OR_RETURN(auto pipeline,
                        example::MakePipeline(w, "sync", source.get(), /*preprocess=*/false));
  DLIO_ASSIGN_OR_RETURN(auto compute, example::MakeCompute(w));

  // Checkpointer: the paper's five files (1 KiB, 1 KiB, 4 KiB, 64 KiB, 4 MiB) every
  // checkpoint.steps_between_checkpoints steps.
  dlio::CheckpointOptions ko;
  ko.name = "paper";
  ko.folder = c.checkpoint.checkpoint_folder;
  DLIO_ASSIGN_OR_RETURN(auto checkpointer_factory, w->registries.checkpointers.Get(ko.name));
  DLIO_ASSIGN_OR_RETURN(auto checkpointer,
                        checkpointer_factory(ko, {w->storage.get(), w->clock, w->tracer.get()}));

  uint64_t checkpoints = 0;
  example::LoopHooks hooks;
  // A checkpoint every checkpoint.steps_between_checkpoints steps; its time is not the epoch's.
  hooks.after_step = [&](uint64_t epoch, uint64_t global_step) -> dlio::Result<int64_t> {
    if (global_step % static_cast<uint64_t>(c.checkpoint.steps_between_checkpoints) != 0) return 0;
    const int64_t k0 = w->clock->NowNanos();
    DLIO_RETURN_NOT_OK(checkpointer->Save(epoch, static_cast<int64_t>(global_step)).status());
    ++checkpoints;
    return w->clock->NowNanos() - k0;
  };
  DLIO_RETURN_NOT_OK(
      example::RunEpochs(w, sampler.get(), source.get(), pipeline.get(), compute.get(), hooks));
  std::printf("checkpoints: %llu\n", static_cast<unsigned long long>(checkpoints));
  return pipeline->Stop();
}

}  // namespace

int main(int argc, char** argv) { return example::Main("cosmic_tagger", argc, argv, Run); }
