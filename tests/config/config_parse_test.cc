// Parsing of DLIO YAML/JSON, spellings, distributions, overrides and LoadConfigFile.
#include <catch2/catch.hpp>

#include "dlio/config.h"
#include "format/hdf5/hdf5_options.h"
#include "storage/s3/s3_options.h"
#include "test_util.h"

namespace dlio {
namespace {

// Modelled on DLIO's unet3d_a100.yaml, plus keys DLIO accepts that dlio does not emulate.
const char* kUnet3d = R"(model:
  name: unet3d
  type: cnn
  model_size: 499153191

framework: pytorch

workflow:
  generate_data: False
  train: True
  checkpoint: True

dataset:
  data_folder: data/unet3d/
  format: npz
  num_files_train: 168
  num_samples_per_file: 1
  record_length_bytes: 146600628
  record_length_bytes_stdev: 68341808
  record_length_bytes_resize: 2097152

reader:
  data_loader: pytorch
  batch_size: 7
  read_threads: 4
  file_shuffle: seed
  sample_shuffle: seed
  dont_use_mmap: True

train:
  epochs: 5
  computation_time: 0.636

checkpoint:
  checkpoint_folder: checkpoints/unet3d
  checkpoint_after_epoch: 5
  epochs_between_checkpoints: 2
  model_size: 499153191

metric:
  au: 0.90
)";

std::string Indent(const std::string& text) {
  std::string out = "  ";
  for (char c : text) {
    out += c;
    if (c == '\n') out += "  ";
  }
  return out;
}

void CheckUnet3d(const WorkloadConfig& c) {
  CHECK(c.model.name == "unet3d");
  CHECK(c.model.type == "cnn");
  CHECK(c.model.model_size_bytes == 499153191);
  CHECK(c.framework == "pytorch");
  CHECK_FALSE(c.workflow.generate_data);
  CHECK(c.workflow.train);
  CHECK(c.workflow.checkpoint);
  CHECK(c.dataset.data_folder == "data/unet3d");  // trailing '/' stripped as DLIO does
  CHECK(c.dataset.format == "npz");
  CHECK(c.dataset.num_files_train == 168);
  CHECK(c.dataset.num_samples_per_file == 1);
  CHECK(c.dataset.record_length_bytes == 146600628);
  CHECK(c.dataset.record_length_bytes_stdev == 68341808);
  CHECK(c.dataset.record_length_bytes_resize == 2097152);
  CHECK(c.reader.data_loader == DataLoader::kPytorch);
  CHECK(c.reader.batch_size == 7);
  CHECK(c.reader.read_threads == 4);
  CHECK(c.reader.file_shuffle == ShuffleMode::kSeed);
  CHECK(c.reader.sample_shuffle == ShuffleMode::kSeed);
  CHECK(c.train.epochs == 5);
  CHECK(c.train.computation_time.type == DistributionSpec::Type::kConstant);
  CHECK(c.train.computation_time.mean == Approx(0.636));
  CHECK(c.checkpoint.checkpoint_folder == "checkpoints/unet3d");
  CHECK(c.checkpoint.checkpoint_after_epoch == 5);
  CHECK(c.checkpoint.epochs_between_checkpoints == 2);
  CHECK(c.checkpoint.model_size_bytes == 499153191);
  CHECK(c.metric.au == Approx(0.90));
}

TEST_CASE("unet3d-style DLIO YAML parses, with and without the workload wrapper") {
  std::vector<std::string> warnings;
  auto plain = ParseConfig(kUnet3d, "unet3d_a100.yaml", WorkloadConfig(), &warnings);
  REQUIRE(plain.ok());
  CheckUnet3d(*plain);
  REQUIRE(plain->Validate().ok());
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("'reader.dont_use_mmap'") != std::string::npos);
  CHECK(warnings[0].find("unet3d_a100.yaml line 28") != std::string::npos);

  std::string wrapped = "hydra:\n  run:\n    dir: out\nworkload:\n" + Indent(kUnet3d);
  auto w = ParseConfig(wrapped, "wrapped.yaml");
  REQUIRE(w.ok());
  CheckUnet3d(*w);
  CHECK(ConfigToJson(*w) == ConfigToJson(*plain));
}

TEST_CASE("the same config as JSON parses to the same values") {
  const char* json = R"({"model": {"name": "unet3d", "type": "cnn", "model_size": 499153191},
    "framework": "pytorch",
    "workflow": {"generate_data": false, "train": true, "checkpoint": true},
    "dataset": {"data_folder": "data/unet3d/", "format": "npz", "num_files_train": 168,
                "num_samples_per_file": 1, "record_length_bytes": 146600628,
                "record_length_bytes_stdev": 68341808, "record_length_bytes_resize": 2097152},
    "reader": {"data_loader": "pytorch", "batch_size": 7, "read_threads": 4,
               "file_shuffle": "seed", "sample_shuffle": "seed", "dont_use_mmap": true},
    "train": {"epochs": 5, "computation_time": 0.636},
    "checkpoint": {"checkpoint_folder": "checkpoints/unet3d", "checkpoint_after_epoch": 5,
                   "epochs_between_checkpoints": 2, "model_size": 499153191},
    "metric": {"au": 0.90}})";
  auto j = ParseConfig(json, "unet3d.json");
  REQUIRE(j.ok());
  CheckUnet3d(*j);
  auto y = ParseConfig(kUnet3d, "unet3d.yaml");
  REQUIRE(y.ok());
  CHECK(ConfigToJson(*j) == ConfigToJson(*y));
}

TEST_CASE("real DLIO workload configs parse unchanged") {
  // Excerpts of cosmoflow_a100, resnet50_a100, dlrm, bert_v100, llama_1t and megatron_deepspeed:
  // scalar model, fractional record length, older key spellings, keys DLIO ignores.
  const char* cosmoflow = R"(model: cosmoflow
framework: tensorflow
workflow:
 generate_data: False
 train: True
dataset:
 data_folder: data/cosmoflow
 num_files_train: 524288
 num_samples_per_file: 1
 record_length: 2828486
 record_length_stdev: 71311
 format: tfrecord
reader:
 data_loader: tensorflow
 read_threads: 4
 batch_size: 1
train:
  epochs: 5
  computation_time: 0.00551
)";
  auto c = ParseConfig(cosmoflow, "cosmoflow_a100.yaml");
  REQUIRE(c.ok());
  CHECK(c->model.name == "cosmoflow");
  CHECK(c->dataset.format == "tfrecord");
  CHECK(c->dataset.record_length_bytes == 2828486);
  CHECK(c->dataset.record_length_bytes_stdev == 71311);
  CHECK(c->Validate().ok());

  const char* resnet = R"(model: {name: resnet50, type: cnn}
dataset:
 num_files_train: 2
 num_samples_per_file: 800
 record_length_bytes: 114660.07
 record_length_bytes_resize: 150528
 format: tfrecord
reader: {data_loader: tensorflow, read_threads: 8, computation_threads: 8, batch_size: 400,
         dont_use_mmap: True}
)";
  auto r = ParseConfig(resnet, "resnet50_a100.yaml");
  REQUIRE(r.ok());
  CHECK(r->dataset.record_length_bytes == 114660);

  const char* dlrm = R"(model: {name: dlrm}
workflow: {generate_data: False, train: True, do_eval: True}
dataset: {format: indexed_binary, num_files_train: 1, num_files_eval: 1,
          num_samples_per_file: 4195198976, record_length: 327680, keep_files: True,
          eval_num_samples_per_file: 91681240}
reader: {data_loader: pytorch, batch_size: 2048, batch_size_eval: 16384, sample_shuffle: random}
train: {epochs: 1, computation_time: 0.064296, total_training_steps: 32768, total_eval_steps: 2048}
evaluation: {eval_time: 0.0843, steps_between_evals: 16384}
)";
  std::vector<std::string> warnings;
  auto d = ParseConfig(dlrm, "dlrm.yaml", WorkloadConfig(), &warnings);
  REQUIRE(d.ok());
  CHECK(d->dataset.num_samples_per_file == 4195198976ull);
  CHECK_FALSE(d->workflow.evaluation);  // DLIO ignores workflow.do_eval; so do we
  CHECK(d->evaluation.eval_time.mean == Approx(0.0843));
  CHECK(warnings.size() == 4);

  const char* llama = R"(model:
  name: llama_405b
  type: transformer
  num_layers: 128
  model_datatype: fp16
  parallelism: {tensor: 8, pipeline: 64, zero_stage: 1}
  transformer: {vocab_size: 128256, hidden_size: 25872, num_kv_heads: 32}
storage: {storage_type: local_fs, storage_root: /mnt/x, storage_options: {region: us-east-1}}
checkpoint:
  checkpoint_folder: checkpoints/llama_1t
  time_between_checkpoints: 5
  num_checkpoints: 10
  recovery_after_steps: 2
  recovery_rank_shift: True
  type: rank_zero
  ksm: {high_ram_trigger: 30}
profiling: {profiler: iostat, iostat_devices: [sda]}
)";
  warnings.clear();
  auto l = ParseConfig(llama, "llama_1t.yaml", WorkloadConfig(), &warnings);
  REQUIRE(l.ok());
  CHECK(l->storage.storage_type == "posix");
  CHECK(l->storage.storage_root == "/mnt/x");
  CHECK(l->checkpoint.rank_mode == CheckpointRankMode::kRoot);
  CHECK(l->checkpoint.type == "auto");
  // The transformer description is honoured, not merely accepted.
  CHECK(l->model.type == "transformer");
  CHECK(l->model.num_layers == 128);
  CHECK(l->model.parallelism.tensor == 8);
  CHECK(l->model.parallelism.pipeline == 64);
  CHECK(l->model.parallelism.zero_stage == 1);
  CHECK(l->model.transformer.hidden_size == 25872);
  CHECK(l->model.transformer.num_kv_heads == 32);
  CHECK(l->model.transformer.ffn_hidden_size == 8192);  // not in the excerpt: DLIO's default
  CHECK(l->checkpoint.time_between_checkpoints == 5);
  for (const auto& w : warnings) {
    INFO(w);
    CHECK(w.find("'model.") == std::string::npos);
  }
  bool mapped_note = false;
  for (const auto& w : warnings)
    mapped_note |= w.find("'local_fs' (DLIO) maps") != std::string::npos;
  CHECK(mapped_note);

  // DLIO's aistore is AIStore through its S3 API (at /s3 of its proxy, DLIO's localhost:8080 by
  // default); an endpoint_url given before or after the type is kept.
  for (const char* ais : {"storage: {storage_type: aistore, storage_root: b}",
                          "storage: {storage_options: {endpoint_url: 'http://h:1/s3'}, "
                          "storage_type: aistore}"}) {
    warnings.clear();
    auto a = ParseConfig(ais, "ais.yaml", WorkloadConfig(), &warnings);
    INFO(ais << (a.ok() ? "" : a.status().message()));
    REQUIRE(a.ok());
    CHECK(a->storage.storage_type == "s3");
    const bool given = std::string(ais).find("h:1") != std::string::npos;
    CHECK(a->storage.backends.Value<S3Options>().endpoint_url ==
          (given ? "http://h:1/s3" : "http://localhost:8080/s3"));
    bool noted = false;
    for (const auto& w : warnings) noted |= w.find("'aistore' (DLIO) maps") != std::string::npos;
    CHECK(noted);
  }

  const char* megatron = R"(model: unet3d
checkpoint:
  steps_between_checkpoints: 1000
  model_size: 30102
  type: independent
  optimization_groups: [1009254400, 865075200, 793600]
  layer_parameters: [129761280, 20971520]
)";
  auto m = ParseConfig(megatron, "megatron_deepspeed.yaml");
  REQUIRE(m.ok());
  // Older DLIO put the model description under checkpoint:, same meaning.
  CHECK(m->model.optimization_groups == std::vector<uint64_t>{1009254400, 865075200, 793600});
  CHECK(m->model.layer_parameters == std::vector<uint64_t>{129761280, 20971520});
  CHECK(m->checkpoint.model_size_bytes == 30102);
  CHECK(m->checkpoint.steps_between_checkpoints == 1000);
  CHECK(m->checkpoint.rank_mode == CheckpointRankMode::kAll);
}

TEST_CASE("bool, integer and size spellings") {
  const char* text = R"(workflow: {train: no, generate_data: on, checkpoint: 1, evaluation: False}
dataset: {record_length_bytes: 4MiB, chunk_size: 256KB, num_files_train: 1e3}
reader: {transfer_size: "1 GiB"}
checkpoint: {transfer_size: 1.5KB}
)";
  auto c = ParseConfig(text, "s.yaml");
  REQUIRE(c.ok());
  CHECK_FALSE(c->workflow.train);
  CHECK(c->workflow.generate_data);
  CHECK(c->workflow.checkpoint);
  CHECK_FALSE(c->workflow.evaluation);
  CHECK(c->dataset.record_length_bytes == 4ull << 20);
  CHECK(Hdf5Of(c->dataset.formats).chunk_size == 256000);
  CHECK(c->dataset.num_files_train == 1000);
  CHECK(c->reader.transfer_size == 1ull << 30);
  CHECK(c->checkpoint.transfer_size == 1500);

  // Units only where the key is a size.
  auto bad = ParseConfig("reader: {batch_size: 4KiB}", "s.yaml");
  REQUIRE_FALSE(bad.ok());
  auto bad_unit = ParseConfig("dataset: {record_length_bytes: 4 MiBs}", "s.yaml");
  REQUIRE_FALSE(bad_unit.ok());
  CHECK(bad_unit.status().message().find("or a size such as 4MiB") != std::string::npos);
}

TEST_CASE("distributions: number, {mean, stdev}, typed maps and _stdev siblings") {
  auto c = ParseConfig(R"(train:
  computation_time_stdev: 0.01
  computation_time: 0.5
reader:
  preprocess_time: {mean: 0.2, stdev: 0.05}
evaluation:
  eval_time: {type: gamma, shape: 2, scale: 0.1}
)",
                       "dist.yaml");
  REQUIRE(c.ok());
  CHECK(c->train.computation_time.type == DistributionSpec::Type::kNormal);
  CHECK(c->train.computation_time.mean == Approx(0.5));
  CHECK(c->train.computation_time.stdev == Approx(0.01));
  CHECK(c->reader.preprocess_time.type == DistributionSpec::Type::kNormal);
  CHECK(c->reader.preprocess_time.stdev == Approx(0.05));
  CHECK(c->evaluation.eval_time.type == DistributionSpec::Type::kGamma);
  CHECK(c->evaluation.eval_time.shape == Approx(2));
  CHECK(c->evaluation.eval_time.scale == Approx(0.1));
  CHECK(c->Validate().ok());

  auto u = ParseConfig("train: {computation_time: {min: 0.1, max: 0.3}}", "u.yaml");
  REQUIRE(u.ok());
  CHECK(u->train.computation_time.type == DistributionSpec::Type::kUniform);

  auto zero = ParseConfig("train: {computation_time: 0.5, computation_time_stdev: 0}", "z.yaml");
  REQUIRE(zero.ok());
  CHECK(zero->train.computation_time.type == DistributionSpec::Type::kConstant);
}

TEST_CASE("distributions with DLIO's parameters: exponential scale, poisson lam") {
  auto c = ParseConfig(R"(train: {computation_time: {type: exponential, scale: 2.5}}
reader: {preprocess_time: {type: poisson, lam: 3}}
evaluation: {eval_time: {type: uniform, min: 1, max: 2}})",
                       "dlio.yaml");
  REQUIRE(c.ok());
  CHECK(c->train.computation_time.type == DistributionSpec::Type::kExponential);
  CHECK(c->train.computation_time.Mean() == Approx(2.5));
  CHECK(c->reader.preprocess_time.type == DistributionSpec::Type::kPoisson);
  CHECK(c->reader.preprocess_time.lam == Approx(3));
  CHECK(c->reader.preprocess_time.Mean() == Approx(3));
  CHECK(c->evaluation.eval_time.Mean() == Approx(1.5));
  CHECK(c->Validate().ok());
  auto bad = ParseConfig("train: {computation_time: {type: poisson, rate: 3}}", "b.yaml");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find(
            "unknown key 'train.computation_time.rate' (in b.yaml line 1)") != std::string::npos);
  CHECK(bad.status().message().find("lam") != std::string::npos);
}

// DLIO's test_computation_time_distribution: each parameter is its own Hydra override.
TEST_CASE("sub-key overrides of a distribution-valued key, as DLIO's test matrix gives them") {
  struct Case {
    std::vector<std::string> overrides;
    DistributionSpec::Type type;
    double mean;
  };
  using T = DistributionSpec::Type;
  const std::string k = "++workload.train.computation_time.";
  const Case cases[] = {
      {{k + "type=uniform", k + "min=1.0", k + "max=2.0"}, T::kUniform, 1.5},
      {{k + "type=normal", k + "mean=1.0", k + "stdev=1.0"}, T::kNormal, 1.0},
      {{k + "type=gamma", k + "shape=1.0", k + "scale=1.0"}, T::kGamma, 1.0},
      {{k + "type=exponential", k + "scale=1.0"}, T::kExponential, 1.0},
      {{k + "type=poisson", k + "lam=1.0"}, T::kPoisson, 1.0},
      {{k + "mean=1.0"}, T::kConstant, 1.0},
      {{k + "mean=1.0", k + "stdev=1.0"}, T::kNormal, 1.0},
      {{"++workload.train.computation_time=2.0"}, T::kConstant, 2.0},
  };
  for (const Case& c : cases) {
    INFO(c.overrides[0]);
    WorkloadConfig config;
    REQUIRE(ApplyOverride(&config, "train.computation_time=0.25").ok());  // a number first
    for (const auto& o : c.overrides) {
      Status st = ApplyOverride(&config, o);
      INFO(o);
      REQUIRE(st.ok());
    }
    CHECK(config.train.computation_time.type == c.type);
    CHECK(config.train.computation_time.Mean() == Approx(c.mean));
    CHECK(config.Validate().ok());
  }
  WorkloadConfig config;
  REQUIRE(ApplyOverride(&config, "evaluation.eval_time.type=exponential").ok());
  REQUIRE(ApplyOverride(&config, "+workload.evaluation.eval_time.scale=0.5").ok());
  REQUIRE(ApplyOverride(&config, "reader.preprocess_time.stdev=0.1").ok());
  CHECK(config.evaluation.eval_time.Mean() == Approx(0.5));
  CHECK(config.reader.preprocess_time.type == DistributionSpec::Type::kNormal);
  Status unknown = ApplyOverride(&config, "train.computation_time.rate=1");
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.message().find("unknown key 'train.computation_time.rate'") != std::string::npos);
  // Checked whole once every override is in: max < min is refused by Validate, naming the key.
  REQUIRE(ApplyOverride(&config, "train.computation_time.type=uniform").ok());
  REQUIRE(ApplyOverride(&config, "train.computation_time.min=3").ok());
  Status invalid = config.Validate();
  REQUIRE_FALSE(invalid.ok());
  CHECK(invalid.message().find("train.computation_time: uniform needs max >= min") !=
        std::string::npos);
}

TEST_CASE("overrides of every form") {
  WorkloadConfig c;
  REQUIRE(ApplyOverride(&c, "dataset.num_files_train=8").ok());
  CHECK(c.dataset.num_files_train == 8);
  REQUIRE(ApplyOverride(&c, "++workload.dataset.num_files_train=9").ok());
  CHECK(c.dataset.num_files_train == 9);
  REQUIRE(ApplyOverride(&c, "+workload.reader.batch_size=3").ok());
  CHECK(c.reader.batch_size == 3);
  REQUIRE(ApplyOverride(&c, "workload.reader.read_threads=2").ok());
  CHECK(c.reader.read_threads == 2);
  REQUIRE(ApplyOverride(&c, "train.computation_time={mean: 0.1, stdev: 0.01}").ok());
  CHECK(c.train.computation_time.type == DistributionSpec::Type::kNormal);
  CHECK(c.train.computation_time.mean == Approx(0.1));
  CHECK(c.train.computation_time.stdev == Approx(0.01));
  REQUIRE(ApplyOverride(&c, "reader.preprocess_time=0.2").ok());
  REQUIRE(ApplyOverride(&c, "reader.preprocess_time_stdev=0.02").ok());
  CHECK(c.reader.preprocess_time.type == DistributionSpec::Type::kNormal);
  REQUIRE(ApplyOverride(&c, "reader={batch_size: 5, file_shuffle: random}").ok());
  CHECK(c.reader.batch_size == 5);
  CHECK(c.reader.file_shuffle == ShuffleMode::kRandom);
  REQUIRE(ApplyOverride(&c, "output.folder=/tmp/run: a [b]").ok());
  CHECK(c.output.folder == "/tmp/run: a [b]");
  REQUIRE(ApplyOverride(&c, "dataset.record_length=1MiB").ok());
  CHECK(c.dataset.record_length_bytes == 1u << 20);

  std::vector<std::string> warnings;
  REQUIRE(ApplyOverride(&c, "checkpoint.randomize_tensor=[1,2]", &warnings).ok());
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("'checkpoint.randomize_tensor'") != std::string::npos);

  Status unknown = ApplyOverride(&c, "dataset.num_file_train=8");
  CHECK(unknown.message() ==
        "unknown key 'dataset.num_file_train' (in override 'dataset.num_file_train=8') "
        "(did you mean 'dataset.num_files_train'?)");
  Status no_eq = ApplyOverride(&c, "dataset.num_files_train");
  CHECK(no_eq.code() == StatusCode::kInvalidArgument);
  CHECK(no_eq.message().find("override 'dataset.num_files_train': expected key=value") !=
        std::string::npos);
  Status bad = ApplyOverride(&c, "reader.batch_size=abc");
  CHECK(bad.message() ==
        "reader.batch_size: expected an unsigned integer, got 'abc' "
        "(in override 'reader.batch_size=abc')");
  CHECK(c.reader.batch_size == 5);  // unchanged by the failed override
  CHECK_FALSE(ApplyOverride(&c, "=3").ok());
}

TEST_CASE("LoadConfigFile names the run after the file and reports a missing file") {
  testing::TempDir dir;
  testing::WriteTextFile(dir / "unet3d_a100.yaml", kUnet3d);
  auto c = LoadConfigFile(dir / "unet3d_a100.yaml");
  REQUIRE(c.ok());
  CHECK(c->name == "unet3d_a100");
  CheckUnet3d(*c);

  testing::WriteTextFile(dir / "named.yaml", "name: mine\n");
  auto n = LoadConfigFile(dir / "named.yaml");
  REQUIRE(n.ok());
  CHECK(n->name == "mine");

  auto missing = LoadConfigFile(dir / "nope.yaml");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == StatusCode::kNotFound);
  CHECK(missing.status().message().find("nope.yaml") != std::string::npos);

  testing::WriteTextFile(dir / "bad.yaml", "dataset:\n  num_files_train: x\n");
  auto bad = LoadConfigFile(dir / "bad.yaml");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("bad.yaml line 2") != std::string::npos);
}

TEST_CASE("values not given keep the base's") {
  WorkloadConfig base;
  base.reader.batch_size = 17;
  base.dataset.format = "npy";
  auto c = ParseConfig("dataset: {num_files_train: 3}", "x.yaml", base);
  REQUIRE(c.ok());
  CHECK(c->reader.batch_size == 17);
  CHECK(c->dataset.format == "npy");
  CHECK(c->dataset.num_files_train == 3);
  auto empty = ParseConfig("", "empty.yaml", base);
  REQUIRE(empty.ok());
  CHECK(ConfigToJson(*empty) == ConfigToJson(base));
}

}  // namespace
}  // namespace dlio

namespace dlio {
namespace {

TEST_CASE("record_length_bytes_sizes: the files' sizes, their mean the record length") {
  auto c = ParseConfig("dataset: {format: npy, record_length_bytes_sizes: [442368, 36864, 36864]}",
                       "sizes.yaml");
  REQUIRE(c.ok());
  CHECK(c->dataset.record_length_bytes_sizes == std::vector<uint64_t>{442368, 36864, 36864});
  CHECK(c->dataset.record_length_bytes == 172032);  // (442368 + 2 x 36864) / 3
  CHECK(c->Validate().ok());

  auto zero = ParseConfig("dataset: {record_length_bytes_sizes: [10, 0]}", "zero.yaml");
  REQUIRE(zero.ok());
  Status st = zero->Validate();
  CHECK(st.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(st.message(), Catch::Contains("dataset.record_length_bytes_sizes[1] is 0"));

  auto both = ParseConfig(
      "dataset: {record_length_bytes_sizes: [10, 20], record_length_bytes_stdev: 3}", "both.yaml");
  REQUIRE(both.ok());
  st = both->Validate();
  CHECK(st.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(st.message(), Catch::Contains("dataset.record_length_bytes_stdev"));

  auto dims =
      ParseConfig("dataset: {record_length_bytes_sizes: [10, 20], record_dims: [4]}", "dims.yaml");
  REQUIRE(dims.ok());
  st = dims->Validate();
  CHECK(st.code() == StatusCode::kInvalidArgument);
  CHECK_THAT(st.message(), Catch::Contains("dataset.record_dims"));
}

}  // namespace
}  // namespace dlio
