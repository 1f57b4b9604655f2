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

  // Pipeline "threaded" with preprocessing threads (tf.data's map), prefetching ahead of compute;
  // the warm-up steps (train.excluded_start_steps) are left out of AU and throughput.
  DLIO_ASSIGN_OR_RETURN(auto pipeline,
                        example::MakePipeline(w, "threaded", source.get(), /*preprocess=*/true));
  DLIO_ASSIGN_OR_RETURN(auto compute, example::MakeCompute(w));
  DLIO_RETURN_NOT_OK(
      example::RunEpochs(w, sampler.get(), source.get(), pipeline.get(), compute.get()));
  return pipeline->Stop();
}

}  // namespace

int main(int argc, char** argv) { return example::Main("imagenet", argc, argv, Run); }
