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
// `dir`, and applies `scale` exactly as the runner does.
inline dlio::Status Load(const std::string& name, const std::vector<std::string>& sets,
                         const std::string& dir, Workload* w) {
  DLIO_ASSIGN_OR_RETURN(dlio::WorkloadConfig c, dlio::LoadWorkloadPreset(name));
  c.dataset.data_folder = dir + "/data";
  c.output.folder = dir + "/output";
  c.checkpoint.checkpoint_folder = dir + "/checkpoints";
  for (const auto& s : sets) DLIO_RETURN_NOT_OK(dlio::ApplyOverride(&c, s));
  DLIO_RETURN_NOT_OK(c.Validate());
  std::vector<std::string> notes;
  DLIO_ASSIGN_OR_RETURN(w->config, dlio::ScaleConfig(c, /*world=*/1, &notes));
  for (const auto& n : notes) std::printf("%s: %s\n", name.c_str(), n.c_str());

  DLIO_RETURN_NOT_OK(dlio::RegisterBuiltins(&w->registries));
  DLIO_ASSIGN_OR_RETURN(w->storage, dlio::MakeStorage(dlio::StorageOptionsFor(w->config),
                                                      w->registries, w->clock, w->tracer.get()));
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
