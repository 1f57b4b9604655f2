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
  DLIO_ASSIGN_OR_RETURN(auto pipeline,
                        example::MakePipeline(w, "sync", source.get(), /*preprocess=*/false));
  DLIO_ASSIGN_OR_RETURN(auto compute, example::MakeCompute(w));

  DLIO_RETURN_NOT_OK(side->BeforeTraining());
  example::LoopHooks hooks;
  // The signal-shot lookups before each step's batch.
  hooks.before_step = [&](uint64_t global_step) { return side->BeforeStep(global_step); };
  DLIO_RETURN_NOT_OK(
      example::RunEpochs(w, sampler.get(), source.get(), pipeline.get(), compute.get(), hooks));
  DLIO_RETURN_NOT_OK(side->AfterTraining());
  std::printf("metadata reads: %llu of %llu bytes\n",
              static_cast<unsigned long long>(side->reads_done()),
              static_cast<unsigned long long>(side_options.read_size));
  return pipeline->Stop();
}

}  // namespace

int main(int argc, char** argv) { return example::Main("frnn", argc, argv, Run); }
