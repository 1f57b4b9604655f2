#include "dlio/workloads.h"

#include <algorithm>

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


// The eight scientific workloads the DLIO paper characterized on Theta (docs/workloads.md: the
// paper's figures, our choices where it is silent, what `scale` shrinks). Each preset holds the
// paper's parameters and a default `scale` that runs it in seconds; `--set scale=1` is the
// paper-sized run. Sizes (samples, requests, chunks, checkpoint files) are never scaled.

constexpr const char* kCosmicTaggerYaml = R"(
model:
  name: cosmic_tagger
  type: unet
framework: pytorch
scale: 0.04
scale_keys: dataset.num_samples_per_file,train.total_training_steps,checkpoint.steps_between_checkpoints
workflow:
  generate_data: true
  train: true
  checkpoint: true
dataset:
  data_folder: ./data/cosmic_tagger
  format: hdf5
  num_files_train: 1
  num_samples_per_file: 43000
  record_length_bytes: 40960
  record_length_bytes_stdev: 10240
  enable_chunking: true
  chunk_size: 2048
reader:
  data_loader: pytorch
  pipeline: sync
  batch_size: 32
  read_threads: 1
  computation_threads: 0
  file_shuffle: off
  sample_shuffle: off
train:
  epochs: 1
  total_training_steps: 150
  computation_time: 1.36
checkpoint:
  checkpoint_folder: ./output/cosmic_tagger/checkpoints
  type: paper
  steps_between_checkpoints: 50
output:
  folder: ./output/cosmic_tagger
)";

constexpr const char* kDffnYaml = R"(
model:
  name: dffn
  type: cnn
framework: tensorflow
scale: 0.02
scale_keys: dataset.num_samples_per_file,train.total_training_steps
workflow:
  generate_data: true
  train: true
dataset:
  data_folder: ./data/dffn
  format: hdf5
  num_files_train: 1
  num_samples_per_file: 18678
  record_length_bytes: 131072
  enable_chunking: true
  chunk_size: 65536
  metadata_file: true
reader:
  data_loader: tensorflow
  pipeline: sync
  batch_size: 32
  read_threads: 1
  computation_threads: 0
  file_shuffle: off
  sample_shuffle: seed
  sharding: none
  read_fraction: 0.3333
train:
  epochs: 1
  total_training_steps: 400
  computation_time: 0.5
output:
  folder: ./output/dffn
)";

constexpr const char* kCosmoflowYaml = R"(
model:
  name: cosmoflow
  type: cnn
framework: tensorflow
scale: 0.01
scale_keys: dataset.num_files_train
workflow:
  generate_data: true
  train: true
dataset:
  data_folder: ./data/cosmoflow
  format: tfrecord
  num_files_train: 1024
  num_samples_per_file: 1
  record_length_bytes: 16777216
reader:
  data_loader: tensorflow
  pipeline: threaded
  batch_size: 1
  read_threads: 4
  computation_threads: 8
  prefetch_size: 2
  transfer_size: 262144
  file_shuffle: seed
  sample_shuffle: off
  preprocess_time: 0.022
train:
  epochs: 4
  computation_time: 0.2
output:
  folder: ./output/cosmoflow
)";

constexpr const char* kCandleYaml = R"(
model:
  name: candle
  type: cnn
framework: tensorflow
scale: 0.05
scale_keys: dataset.num_samples_per_file
workflow:
  generate_data: true
  train: true
dataset:
  data_folder: ./data/candle
  format: csv
  num_files_train: 1
  num_samples_per_file: 1120
  record_length_bytes: 262144
reader:
  data_loader: tensorflow
  read_type: memory
  pipeline: preload
  batch_size: 20
  read_threads: 1
  computation_threads: 0
  transfer_size: 262144
  sharding: none
train:
  epochs: 60
  computation_time: 0.05
output:
  folder: ./output/candle
)";

constexpr const char* kFrnnYaml = R"(
model:
  name: frnn
  type: rnn
framework: tensorflow
scale: 0.01
scale_keys: dataset.num_files_train
workflow:
  generate_data: true
  train: true
dataset:
  data_folder: ./data/frnn
  format: npz
  num_files_train: 2800
  num_samples_per_file: 1024
  record_length_bytes: 2048
reader:
  data_loader: tensorflow
  pipeline: sync
  batch_size: 1024
  read_threads: 4
  computation_threads: 0
  file_shuffle: seed
  sample_shuffle: off
side_io:
  read_file: signal_shots.txt
  read_file_size: 262144
  read_file_format: raw
  read_size: 100
  reads: 16
  schedule: per_step
  access: random
train:
  epochs: 1
  computation_time: 0.1
output:
  folder: ./output/frnn
)";

constexpr const char* kImagenetYaml = R"(
model:
  name: imagenet
  type: cnn
framework: tensorflow
scale: 0.02
scale_keys: dataset.num_files_train,dataset.num_samples_per_file,train.excluded_start_steps
workflow:
  generate_data: true
  train: true
dataset:
  data_folder: ./data/imagenet
  format: tfrecord
  num_files_train: 1024
  num_samples_per_file: 1024
  record_length_bytes: 262144
reader:
  data_loader: tensorflow
  pipeline: threaded
  batch_size: 32
  read_threads: 2
  computation_threads: 4
  prefetch_size: 2
  transfer_size: 262144
  file_shuffle: seed
  sample_shuffle: off
  preprocess_time: 0.0035
train:
  epochs: 1
  total_training_steps: 110
  excluded_start_steps: 10
  computation_time: 0.1
output:
  folder: ./output/imagenet
)";

constexpr const char* kClimateSegYaml = R"(
model:
  name: climate_seg
  type: cnn
framework: tensorflow
scale: 0.01
scale_keys: dataset.num_samples_per_file,train.total_training_steps
workflow:
  generate_data: true
  train: true
dataset:
  data_folder: ./data/climate_seg
  format: synthetic
  num_files_train: 1
  num_samples_per_file: 1200
  record_length_bytes: 56623104
reader:
  data_loader: tensorflow
  pipeline: threaded
  batch_size: 1
  read_threads: 1
  computation_threads: 0
side_io:
  read_file: stats.h5
  read_file_size: 2048
  read_file_format: hdf5
  read_size: 500
  reads: 50
  schedule: spread
  access: random
  write_bytes: 4194304
  write_file: model-{rank}.json
train:
  epochs: 1
  total_training_steps: 1200
  computation_time: 0.2
output:
  folder: ./output/climate_seg
)";

constexpr const char* kL2hmcYaml = R"(
model:
  name: l2hmc
  type: mcmc
framework: tensorflow
scale: 0.04
scale_keys: dataset.num_samples_per_file,train.total_training_steps,checkpoint.steps_between_checkpoints
workflow:
  generate_data: true
  train: true
  checkpoint: true
dataset:
  data_folder: ./data/l2hmc
  format: synthetic
  num_files_train: 1
  num_samples_per_file: 4800
  record_length_bytes: 4096
reader:
  data_loader: tensorflow
  pipeline: threaded
  batch_size: 32
  read_threads: 1
  computation_threads: 0
train:
  epochs: 1
  total_training_steps: 150
  computation_time: 0.1
checkpoint:
  checkpoint_folder: ./output/l2hmc/checkpoints
  type: model
  model_size_bytes: 12582912
  model_files: 4
  rank_mode: root
  storage_type: stdio
  transfer_size: 4194304
  steps_between_checkpoints: 50
output:
  folder: ./output/l2hmc
)";

std::vector<WorkloadPresetInfo> MakePresets() {
  std::vector<WorkloadPresetInfo> presets = {
      {"default",
       "small npz dataset (32 files x 4 samples x 256 KiB), 3 shuffled epochs, 2 read threads, "
       "2 ms compute, one checkpoint",
       kDefaultYaml},
      {"cosmic_tagger",
       "DLIO paper: UNet on one shared chunked HDF5 file (40 +- 10 KB samples, 2 KB chunks), "
       "read sequentially by one thread before each step, checkpoint every 50 steps",
       kCosmicTaggerYaml},
      {"dffn",
       "DLIO paper: Flood-Filling Networks, random 64 KB-chunk reads of a shared HDF5 file and "
       "its metadata file, each rank a third of the data, I/O and compute apart",
       kDffnYaml},
      {"cosmoflow",
       "DLIO paper: 1024 TFRecord files of 16 MiB samples, 256 KB requests from 4 read "
       "threads, 8 preprocessing threads, I/O hidden behind compute",
       kCosmoflowYaml},
      {"candle",
       "DLIO paper: one 256 KB-per-row CSV loaded whole into memory by every rank, then 60 "
       "epochs from memory",
       kCandleYaml},
      {"frnn",
       "DLIO paper: 2 KB samples from 2 MB NPZ files in random file order, many 100 B reads of "
       "a signal-shots metadata file, I/O before each step",
       kFrnnYaml},
      {"imagenet",
       "DLIO paper: 1024 TFRecord files of 256 KB samples, files random and each read "
       "sequentially, 2 read + 4 preprocessing threads overlapping compute",
       kImagenetYaml},
      {"climate_seg",
       "DLIO paper: in-memory training data, 50 random 500 B reads of an HDF5 stats file over "
       "the run, a 4 MB JSON model file per rank at the end",
       kClimateSegYaml},
      {"l2hmc",
       "DLIO paper: in-memory data, rank 0 writes four-file STDIO checkpoints (one fwrite per "
       "file) every 50 steps",
       kL2hmcYaml},
  };
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
