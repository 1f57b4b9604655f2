// What the eight DLIO-paper examples share: the preset's parameters (the very YAML `dlio-run
// --workload NAME` runs, with the same `scale`), a scratch folder, the storage and format, the
// dataset, and a per-epoch report. Each example then composes DataSource, Sampler, Pipeline and
// ComputeEmulator itself, with its workload's own I/O, as a training code linking libdlio would.
//
//   <example> [--dir DIR] [--set key=value ...]     e.g. cosmoflow --set scale=0.004
#pragma once

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dlio/compute.h"
#include "dlio/config.h"
#include "dlio/data_source.h"
#include "dlio/generator.h"
#include "dlio/loop.h"
#include "dlio/metrics.h"
#include "dlio/pipeline.h"
#include "dlio/registries.h"
#include "dlio/sampler.h"
#include "dlio/storage.h"
#include "dlio/workloads.h"

namespace example {

// The parts every example uses, built from the preset.
struct Workload {
  dlio::WorkloadConfig config;  // the preset, overridden, scaled
  dlio::Registries registries;
  const dlio::Clock* clock = dlio::SystemClock();
  std::unique_ptr<dlio::Tracer> tracer = dlio::MakeNullTracer();
  std::unique_ptr<dlio::Storage> storage;
  std::unique_ptr<dlio::Format> format;
};

// A scratch folder removed on exit unless the user named one with --dir.
class ScratchDir {
 public:
  explicit ScratchDir(std::string dir) : dir_(std::move(dir)), own_(dir_.empty()) {
    if (own_) {
      char templ[] = "/tmp/dlio-example-XXXXXX";
      if (mkdtemp(templ) != nullptr) dir_ = templ;
    }
  }
  ~ScratchDir() {
    if (own_ && !dir_.empty()) std::filesystem::remove_all(dir_);  // only what we created
  }
  const std::string& path() const { return dir_; }

 private:
  std::string dir_;
  bool own_;
};

// Loads preset `name`, applies the command line's --set overrides, puts data and outputs under
// `dir`, and makes the run's config exactly as the runner does (RunConfigFor: the format's record
// sizes and `scale`).
inline dlio::Status Load(const std::string& name, const std::vector<std::string>& sets,
                         const std::string& dir, Workload* w) {
  DLIO_ASSIGN_OR_RETURN(dlio::WorkloadConfig c, dlio::LoadWorkloadPreset(name));
  c.dataset.data_folder = dir + "/data";
  c.output.folder = dir + "/output";
  c.checkpoint.checkpoint_folder = dir + "/checkpoints";
  for (const auto& s : sets) DLIO_RETURN_NOT_OK(dlio::ApplyOverride(&c, s));
  DLIO_RETURN_NOT_OK(c.Validate());
  DLIO_RETURN_NOT_OK(dlio::RegisterBuiltins(&w->registries));
  std::vector<std::string> notes;
  DLIO_ASSIGN_OR_RETURN(w->config, dlio::RunConfigFor(c, /*world=*/1, w->registries, &notes));
  for (const auto& n : notes) std::printf("%s: %s\n", name.c_str(), n.c_str());

  DLIO_ASSIGN_OR_RETURN(
      w->storage, dlio::MakeStorage(dlio::StorageOptionsFor(w->config), w->registries.storages,
                                    w->clock, w->tracer.get()));
  DLIO_ASSIGN_OR_RETURN(auto factory, w->registries.formats.Get(w->config.dataset.format));
  DLIO_ASSIGN_OR_RETURN(w->format, factory());
  return dlio::Status::OK();
}

// Writes the dataset (kept when it is already there).
inline dlio::Status Generate(Workload* w) {
  dlio::GenerateOptions go;
  go.seed = w->config.train.seed;
  DLIO_ASSIGN_OR_RETURN(
      auto report, dlio::GenerateDataset(w->config.dataset, *w->format,
                                         dlio::FormatOptionsFor(w->config), w->storage.get(), go));
  std::printf("dataset: %llu files written, %llu already there\n",
              static_cast<unsigned long long>(report.files_written),
              static_cast<unsigned long long>(report.files_skipped));
  return dlio::Status::OK();
}

// The format bound to the storage, over the training files.
inline dlio::Result<std::unique_ptr<dlio::DataSource>> MakeSource(Workload* w) {
  dlio::FormatDataSourceOptions o;
  o.format = dlio::FormatOptionsFor(w->config);
  o.samples_per_file = w->config.dataset.num_samples_per_file;
  o.max_open_files = w->config.reader.max_open_files;
  return dlio::MakeFormatDataSource(
      w->storage.get(), w->format.get(),
      dlio::DatasetFiles(w->config.dataset, *w->format, dlio::Split::kTrain), o);
}

// The steps of one epoch: the plan's full batches, capped by train.total_training_steps.
inline uint64_t StepsOf(const dlio::WorkloadConfig& c, size_t plan_size) {
  uint64_t steps = plan_size / c.reader.batch_size;
  if (c.train.total_training_steps > 0) {
    steps = std::min<uint64_t>(steps, static_cast<uint64_t>(c.train.total_training_steps));
  }
  return steps;
}

inline void PrintEpoch(uint64_t epoch, const std::vector<dlio::StepRecord>& steps,
                       int64_t elapsed_ns, uint64_t excluded) {
  const auto m = dlio::ComputeBlockMetrics(steps, elapsed_ns, excluded);
  std::printf("epoch %llu: %llu steps, load %.3f s, compute %.3f s, AU %.1f%%, %.1f MiB/s\n",
              static_cast<unsigned long long>(epoch), static_cast<unsigned long long>(m.steps),
              m.load_s, m.compute_s, m.au_percent, m.bytes_per_s / (1024.0 * 1024.0));
}

// Pipeline `name` (threaded, sync, preload, ...) over `source` with the preset's batch size and
// read threads. `preprocess`: also its preprocessing threads and time and its prefetch depth
// (tf.data's map and prefetch); otherwise none.
inline dlio::Result<std::unique_ptr<dlio::Pipeline>> MakePipeline(Workload* w,
                                                                  const std::string& name,
                                                                  dlio::DataSource* source,
                                                                  bool preprocess) {
  const dlio::WorkloadConfig& c = w->config;
  dlio::PipelineOptions po;
  po.name = name;
  po.batch_size = c.reader.batch_size;
  po.read_threads = c.reader.read_threads;
  po.computation_threads = 0;
  if (preprocess) {
    po.computation_threads = c.reader.computation_threads;
    po.prefetch_size = c.reader.prefetch_size;
    po.preprocess_time = c.reader.preprocess_time;
    po.seed = dlio::MixSeed(c.train.seed, 0, 0x77);
  }
  DLIO_ASSIGN_OR_RETURN(auto factory, w->registries.pipelines.Get(po.name));
  return factory(po, {source, w->clock, w->tracer.get()});
}

// The emulated accelerator: train.computation_time per step.
inline dlio::Result<std::unique_ptr<dlio::ComputeEmulator>> MakeCompute(Workload* w) {
  dlio::ComputeOptions co;
  co.time = w->config.train.computation_time;
  co.seed = dlio::MixSeed(w->config.train.seed, 0, 0xc0);
  return dlio::MakeComputeEmulator(co, w->clock);
}

// What an example adds to the training loop of RunEpochs; every member may be left empty.
struct LoopHooks {
  // After the epoch's plan is made, with the number of steps it gives.
  std::function<dlio::Status(uint64_t epoch, uint64_t steps)> on_plan;
  // Before a step waits for its batch; counted as load time (side reads of metadata files).
  std::function<dlio::Status(uint64_t global_step)> before_step;
  // After a step's compute; returns the nanoseconds it spent (checkpoints), which are left out
  // of the epoch's time.
  std::function<dlio::Result<int64_t>(uint64_t epoch, uint64_t global_step)> after_step;
};

// The training loop: for each epoch, this rank's plan (rank 0 of 1), the full batches of it,
// each step waiting for its batch and then computing, and a report of the epoch's steps.
inline dlio::Status RunEpochs(Workload* w, dlio::Sampler* sampler, dlio::DataSource* source,
                              dlio::Pipeline* pipeline, dlio::ComputeEmulator* compute,
                              const LoopHooks& hooks = {}) {
  const dlio::WorkloadConfig& c = w->config;
  std::vector<dlio::SampleRef> plan;
  uint64_t global_step = 0;
  for (uint64_t epoch = 0; epoch < c.train.epochs; ++epoch) {
    DLIO_RETURN_NOT_OK(sampler->Plan({epoch, 0, 1, &source->samples_per_file()}, &plan));
    const uint64_t steps = StepsOf(c, plan.size());
    plan.resize(steps * c.reader.batch_size);
    if (hooks.on_plan) DLIO_RETURN_NOT_OK(hooks.on_plan(epoch, steps));
    DLIO_RETURN_NOT_OK(pipeline->StartEpoch(epoch, plan));
    std::vector<dlio::StepRecord> records;
    const int64_t start = w->clock->NowNanos();
    int64_t excluded_ns = 0;
    dlio::BatchLease batch;
    for (uint64_t s = 0; s < steps; ++s, ++global_step) {
      dlio::StepRecord rec;
      const int64_t t0 = w->clock->NowNanos();
      if (hooks.before_step) DLIO_RETURN_NOT_OK(hooks.before_step(global_step));
      bool end = false;
      DLIO_RETURN_NOT_OK(pipeline->Next(&batch, &end));  // ready unless I/O fell behind
      const int64_t t1 = w->clock->NowNanos();
      compute->Step(static_cast<int64_t>(s));
      rec.load_ns = t1 - t0;
      rec.compute_ns = w->clock->NowNanos() - t1;
      rec.samples = batch->samples.size();
      rec.bytes = batch->bytes;
      records.push_back(rec);
      batch.reset();  // the step is done with its input: the pipeline may refill the buffers
      if (hooks.after_step) {
        DLIO_ASSIGN_OR_RETURN(const int64_t ns, hooks.after_step(epoch, global_step + 1));
        excluded_ns += ns;
      }
    }
    // The warm-up steps (train.excluded_start_steps) are left out of AU and throughput.
    PrintEpoch(epoch + 1, records, w->clock->NowNanos() - start - excluded_ns,
               c.train.excluded_start_steps);
  }
  return dlio::Status::OK();
}

// Parses [--dir DIR] [--set key=value | key=value ...] and runs `body` with them.
template <typename Body>
int Main(const char* name, int argc, char** argv, Body body) {
  std::string dir;
  std::vector<std::string> sets;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--dir" && i + 1 < argc) {
      dir = argv[++i];
    } else if (a == "--set" && i + 1 < argc) {
      sets.push_back(argv[++i]);
    } else if (a.find('=') != std::string::npos) {
      sets.push_back(a);
    } else {
      std::fprintf(stderr, "usage: %s [--dir DIR] [--set key=value ...]\n", name);
      return 2;
    }
  }
  ScratchDir scratch(dir);
  if (scratch.path().empty()) return 1;
  Workload w;
  dlio::Status s = Load(name, sets, scratch.path(), &w);
  if (s.ok()) s = body(&w);
  if (!s.ok()) {
    std::fprintf(stderr, "%s: %s\n", name, s.ToString().c_str());
    return 1;
  }
  return 0;
}

}  // namespace example
