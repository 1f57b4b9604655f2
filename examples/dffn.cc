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
  DLIO_ASSIGN_OR_RETURN(auto pipeline,
                        example::MakePipeline(w, "sync", source.get(), /*preprocess=*/false));
  DLIO_ASSIGN_OR_RETURN(auto compute, example::MakeCompute(w));
  example::LoopHooks hooks;
  hooks.on_plan = [&](uint64_t epoch, uint64_t steps) {
    std::printf("epoch %llu reads %llu of %llu samples\n",
                static_cast<unsigned long long>(epoch + 1),
                static_cast<unsigned long long>(steps * c.reader.batch_size),
                static_cast<unsigned long long>(c.dataset.num_samples_per_file));
    return dlio::Status::OK();
  };
  DLIO_RETURN_NOT_OK(
      example::RunEpochs(w, sampler.get(), source.get(), pipeline.get(), compute.get(), hooks));
  return pipeline->Stop();
}

}  // namespace

int main(int argc, char** argv) { return example::Main("dffn", argc, argv, Run); }
