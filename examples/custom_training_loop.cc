// How a training code links libdlio directly: it keeps its own loop and composes a DataSource,
// a Sampler, a Pipeline and a ComputeEmulator, instead of calling RunWorkload.
//
//   custom_training_loop [DATA_DIR]     (default: a fresh folder under /tmp)
//
// It writes a small npz dataset with the generator, then trains two shuffled epochs on it with
// two read threads, printing each epoch's load time, compute time and AU.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "dlio/compute.h"
#include "dlio/data_source.h"
#include "dlio/generator.h"
#include "dlio/metrics.h"
#include "dlio/pipeline.h"
#include "dlio/registries.h"
#include "dlio/sampler.h"
#include "dlio/storage.h"

namespace {

dlio::Status Main(const std::string& data_dir) {
  dlio::Registries registries;
  DLIO_RETURN_NOT_OK(dlio::RegisterBuiltins(&registries));
  const dlio::Clock* clock = dlio::SystemClock();
  auto tracer = dlio::MakeNullTracer();
  DLIO_ASSIGN_OR_RETURN(auto storage,
                        dlio::MakeStorage(dlio::StorageOptions{}, registries, clock, tracer.get()));
  DLIO_ASSIGN_OR_RETURN(auto format_factory, registries.formats.Get("npz"));
  DLIO_ASSIGN_OR_RETURN(auto format, format_factory());

  // 1. A dataset: 16 files x 8 samples of 128 KiB (kept if it is already there).
  dlio::DatasetConfig dataset;
  dataset.data_folder = data_dir;
  dataset.num_files_train = 16;
  dataset.num_samples_per_file = 8;
  dataset.record_length_bytes = 128 * 1024;
  dlio::FormatOptions format_options;
  DLIO_ASSIGN_OR_RETURN(auto generated, dlio::GenerateDataset(dataset, *format, format_options,
                                                              storage.get(), {}));
  std::printf("dataset: %llu files written, %llu already there\n",
              static_cast<unsigned long long>(generated.files_written),
              static_cast<unsigned long long>(generated.files_skipped));

  // 2. DataSource: the npz reader bound to the storage.
  dlio::FormatDataSourceOptions source_options;
  source_options.samples_per_file = dataset.num_samples_per_file;
  DLIO_ASSIGN_OR_RETURN(
      auto source, dlio::MakeFormatDataSource(storage.get(), format.get(),
                                              dlio::DatasetFiles(dataset, *format, dlio::Split::kTrain),
                                              source_options));

  // 3. Sampler: files and samples shuffled, reproducibly, differently each epoch.
  dlio::SamplerOptions sampler_options;
  sampler_options.file_shuffle = dlio::ShuffleMode::kSeed;
  sampler_options.sample_shuffle = dlio::ShuffleMode::kSeed;
  DLIO_ASSIGN_OR_RETURN(auto sampler, dlio::MakeSampler(sampler_options));

  // 4. Pipeline: 2 read threads, batches of 8, 2 batches prefetched.
  dlio::PipelineOptions pipeline_options;
  pipeline_options.batch_size = 8;
  pipeline_options.read_threads = 2;
  pipeline_options.prefetch_size = 2;
  DLIO_ASSIGN_OR_RETURN(auto pipeline_factory, registries.pipelines.Get("threaded"));
  DLIO_ASSIGN_OR_RETURN(auto pipeline,
                        pipeline_factory(pipeline_options, {source.get(), clock, tracer.get()}));

  // 5. ComputeEmulator: 3 ms +- 0.5 ms per step, sleeping as a GPU-bound trainer would.
  dlio::ComputeOptions compute_options;
  compute_options.time.type = dlio::DistributionSpec::Type::kNormal;
  compute_options.time.mean = 0.003;
  compute_options.time.stdev = 0.0005;
  DLIO_ASSIGN_OR_RETURN(auto compute, dlio::MakeComputeEmulator(compute_options, clock));

  std::vector<dlio::SampleRef> plan;
  for (uint64_t epoch = 0; epoch < 2; ++epoch) {
    DLIO_RETURN_NOT_OK(sampler->Plan({epoch, 0, 1, &source->samples_per_file()}, &plan));
    DLIO_RETURN_NOT_OK(pipeline->StartEpoch(epoch, plan));
    std::vector<dlio::StepRecord> steps;
    const int64_t start = clock->NowNanos();
    for (int64_t step = 0;; ++step) {
      dlio::StepRecord rec;
      const int64_t t0 = clock->NowNanos();
      dlio::BatchLease batch;
      bool end_of_epoch = false;
      DLIO_RETURN_NOT_OK(pipeline->Next(&batch, &end_of_epoch));
      if (end_of_epoch) break;
      const int64_t t1 = clock->NowNanos();
      compute->Step(step);  // the model would consume batch->samples here
      rec.load_ns = t1 - t0;
      rec.compute_ns = clock->NowNanos() - t1;
      rec.samples = batch->samples.size();
      rec.bytes = batch->bytes;
      steps.push_back(rec);
    }
    const auto m = dlio::ComputeBlockMetrics(steps, clock->NowNanos() - start, 1);
    std::printf("epoch %llu: %llu steps, load %.3f s, compute %.3f s, AU %.1f%%, %.0f samples/s\n",
                static_cast<unsigned long long>(epoch + 1),
                static_cast<unsigned long long>(m.steps), m.load_s, m.compute_s, m.au_percent,
                m.samples_per_s);
  }
  return pipeline->Stop();
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = argc > 1 ? argv[1] : "";
  const bool own_dir = dir.empty();
  if (own_dir) {
    char templ[] = "/tmp/dlio-example-XXXXXX";
    if (mkdtemp(templ) == nullptr) return 1;
    dir = templ;
  }
  dlio::Status s = Main(dir);
  if (own_dir) std::filesystem::remove_all(dir);  // only the folder this run created
  if (!s.ok()) {
    std::fprintf(stderr, "custom_training_loop: %s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}
