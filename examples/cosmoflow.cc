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
  DLIO_ASSIGN_OR_RETURN(auto pipeline,
                        example::MakePipeline(w, "threaded", source.get(), /*preprocess=*/true));
  DLIO_ASSIGN_OR_RETURN(auto compute, example::MakeCompute(w));
  DLIO_RETURN_NOT_OK(
      example::RunEpochs(w, sampler.get(), source.get(), pipeline.get(), compute.get()));
  return pipeline->Stop();
}

}  // namespace

int main(int argc, char** argv) { return example::Main("cosmoflow", argc, argv, Run); }
