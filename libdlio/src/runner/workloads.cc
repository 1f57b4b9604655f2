#include "dlio/workloads.h"

#include <algorithm>
#include <sstream>

#include "runner/embedded_workloads.h"

namespace dlio {
namespace {

// The default workload: small enough to generate and train in a few seconds on a laptop, yet it
// exercises every stage: generation, a shuffled threaded pipeline, compute, checkpoints.
constexpr const char* kDefaultYaml = R"(
model:
  name: default
framework: dlio
workflow:
  generate_data: true
  train: true
  checkpoint: true
dataset:
  data_folder: ./data/default
  format: npz
  num_files_train: 32
  num_samples_per_file: 4
  record_length_bytes: 262144
reader:
  batch_size: 8
  read_threads: 2
  computation_threads: 1
  prefetch_size: 2
  file_shuffle: seed
  sample_shuffle: seed
train:
  epochs: 3
  computation_time: 0.002
  seed: 123
checkpoint:
  checkpoint_folder: ./output/default/checkpoints
  checkpoint_after_epoch: 3
  epochs_between_checkpoints: 1
output:
  folder: ./output/default
metric:
  au: 0.90
)";

// The "# description: ..." header line every embedded YAML file carries.
std::string DescriptionOf(const std::string& yaml) {
  std::istringstream in(yaml);
  const std::string tag = "# description:";
  for (std::string line; std::getline(in, line);) {
    if (line.compare(0, tag.size(), tag) == 0) {
      const size_t b = line.find_first_not_of(' ', tag.size());
      return b == std::string::npos ? "" : line.substr(b);
    }
  }
  return "";
}

std::vector<WorkloadPresetInfo> MakePresets() {
  std::vector<WorkloadPresetInfo> presets = {
      {"default",
       "small npz dataset (32 files x 4 samples x 256 KiB), 3 shuffled epochs, 2 read threads, "
       "2 ms compute, one checkpoint",
       kDefaultYaml},
  };
  for (const auto& w : runner_internal::EmbeddedWorkloads()) {
    presets.push_back({w.name, DescriptionOf(w.yaml), w.yaml});
  }
  std::sort(presets.begin(), presets.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  return presets;
}

}  // namespace

const std::vector<WorkloadPresetInfo>& WorkloadPresets() {
  static const std::vector<WorkloadPresetInfo> presets = MakePresets();  // immutable
  return presets;
}

Result<WorkloadConfig> LoadWorkloadPreset(const std::string& name,
                                          std::vector<std::string>* warnings) {
  for (const auto& p : WorkloadPresets()) {
    if (p.name != name) continue;
    WorkloadConfig base;
    base.name = name;
    DLIO_ASSIGN_OR_RETURN(WorkloadConfig c,
                          ParseConfig(p.yaml, "workload preset '" + name + "'", base, warnings));
    c.name = name;
    return c;
  }
  std::string known;
  for (const auto& p : WorkloadPresets()) known += (known.empty() ? "" : ", ") + p.name;
  return Status::NotFound("unknown workload '" + name + "' (known: " + known + ")");
}

Result<WorkloadConfig> LoadWorkload(const std::string& config_file, const std::string& workload,
                                    std::vector<std::string>* warnings) {
  if (!config_file.empty() && !workload.empty()) {
    return Status::InvalidArgument("--config and --workload are exclusive; give one");
  }
  if (!config_file.empty()) return LoadConfigFile(config_file, WorkloadConfig(), warnings);
  return LoadWorkloadPreset(workload.empty() ? "default" : workload, warnings);
}

}  // namespace dlio
