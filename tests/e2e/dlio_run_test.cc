// End-to-end tests: the dlio-run binary on tiny datasets in a temporary directory.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "test_util.h"

namespace fs = std::filesystem;
using dlio::testing::CommandResult;
using dlio::testing::ReadTextFile;
using dlio::testing::RunCommand;
using dlio::testing::TempDir;
using dlio::testing::WriteTextFile;
using json = nlohmann::json;

namespace {

using dlio::testing::DlioRun;

// A tiny workload: 6 files x 2 samples x 16 KiB, batch 2, in `dir`. Like the default preset it
// generates the dataset first (workflow.generate_data), reusing it when it is already there.
std::string TinyArgs(const TempDir& dir) {
  return " --quiet --set dataset.data_folder=" + dir / "data" +
         " --set output.folder=" + dir / "out" +
         " --set checkpoint.checkpoint_folder=" + dir / "ckpt" +
         " --set dataset.num_files_train=6 --set dataset.num_samples_per_file=2"
         " --set dataset.record_length_bytes=16384 --set reader.batch_size=2"
         " --set train.epochs=2 --set train.computation_time=0.0005";
}

CommandResult Run(const std::string& args) { return RunCommand(DlioRun() + " " + args); }

json LoadJson(const std::string& path) { return json::parse(ReadTextFile(path)); }

}  // namespace

TEST_CASE("dlio-run generates a dataset, trains on it and writes DLIO's outputs") {
  TempDir dir;
  auto r = Run(TinyArgs(dir));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("train epoch 2") != std::string::npos);
  // DLIO's naming: <data>/train/<prefix>_<i>_of_<n>.npz, plus our marker.
  int npz = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir / "data")) {
    if (e.path().extension() == ".npz") ++npz;
  }
  CHECK(npz == 6);
  CHECK(fs::exists(dir / "data/.dlio-dataset.json"));

  json s = LoadJson(dir / "out/summary.json");
  const json& m = s["metric"];
  REQUIRE(m["train_au_percentage"].size() == 2);
  REQUIRE(m["train_throughput_samples_per_second"].size() == 2);
  CHECK(m["train_au_mean_percentage"].get<double>() > 0);
  CHECK(m["train_au_mean_percentage"].get<double>() <= 100.0);
  CHECK(m["train_throughput_mean_samples_per_second"].get<double>() > 0);
  CHECK(m.contains("train_io_mean_MB_per_second"));
  CHECK(m.contains("train_io_mean_MiB_per_second"));
  CHECK((m["train_au_meet_expectation"] == "success" || m["train_au_meet_expectation"] == "fail"));
  // Every sample was read from storage in each of the 2 epochs: 12 samples x 16 KiB x 2.
  CHECK(s["io"]["read_bytes"].get<uint64_t>() >= 2ull * 12 * 16384);
  CHECK(s["num_accelerators"] == 1);

  json per_epoch = LoadJson(dir / "out/0_per_epoch_stats.json");
  CHECK(per_epoch.contains("1"));
  CHECK(per_epoch.contains("2"));
  json out = LoadJson(dir / "out/0_output.json");
  // DLIO's structure: per epoch, per block (one without step-cadence checkpoints).
  REQUIRE(out["1"]["load"]["block1"].size() == 6);  // 12 samples / batch 2
  CHECK(out["1"]["compute"]["block1"][0].get<double>() >= 0.0005);
  CHECK(out.contains("hostname"));
  CHECK(per_epoch["1"]["block1"].contains("duration"));
  CHECK(fs::exists(dir / "out/config.json"));
}

TEST_CASE("dlio-run reuses an existing dataset and refuses a foreign non-empty folder") {
  TempDir dir;
  REQUIRE(Run(TinyArgs(dir) + " --no-train").exit_code == 0);
  auto again = Run(TinyArgs(dir) + " --no-train");
  INFO(again.output);
  CHECK(again.exit_code == 0);
  CHECK(again.output.find("6 already present") != std::string::npos);

  TempDir foreign;
  fs::create_directories(foreign / "data");
  WriteTextFile(foreign / "data/precious.txt", "keep me");
  auto refused = Run(TinyArgs(foreign) + " --no-train");
  INFO(refused.output);
  CHECK(refused.exit_code != 0);
  CHECK(refused.output.find(foreign / "data") != std::string::npos);
  CHECK(ReadTextFile(foreign / "data/precious.txt") == "keep me");
}

TEST_CASE("dlio-run rejects unknown keys and bad values naming the key") {
  TempDir dir;
  auto both = Run(TinyArgs(dir) + " --generate --no-generate");
  CHECK(both.exit_code == 2);
  CHECK(both.output.find("--no-generate") != std::string::npos);

  auto unknown = Run(TinyArgs(dir) + " ++workload.dataset.num_file_train=3");
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.output.find("dataset.num_file_train") != std::string::npos);

  auto bad = Run(TinyArgs(dir) + " --set reader.batch_size=0");
  CHECK(bad.exit_code == 2);
  CHECK(bad.output.find("reader.batch_size") != std::string::npos);

  auto enum_bad = Run(TinyArgs(dir) + " --set reader.file_shuffle=sometimes");
  CHECK(enum_bad.exit_code == 2);
  CHECK(enum_bad.output.find("reader.file_shuffle") != std::string::npos);
  CHECK(enum_bad.output.find("seed") != std::string::npos);  // lists the accepted values

  auto missing_data = Run(TinyArgs(dir) + " --no-generate");
  CHECK(missing_data.exit_code == 1);
  CHECK(missing_data.output.find(dir / "data") != std::string::npos);
}

TEST_CASE("dlio-run runs a DLIO YAML config with Hydra-style overrides") {
  TempDir dir;
  const std::string yaml = R"(model:
  name: tiny_unet
framework: pytorch
workflow:
  generate_data: True
  train: True
  checkpoint: True
dataset:
  data_folder: )" + dir / "data" +
                           R"(
  format: npz
  num_files_train: 4
  num_samples_per_file: 1
  record_length_bytes: 8192
reader:
  data_loader: pytorch
  batch_size: 2
  read_threads: 2
  file_shuffle: seed
  sample_shuffle: seed
train:
  epochs: 3
  computation_time: 0.001
checkpoint:
  checkpoint_folder: )" + dir / "ckpt" +
                           R"(
  checkpoint_after_epoch: 2
  epochs_between_checkpoints: 1
output:
  folder: )" + dir / "out" +
                           "\n";
  WriteTextFile(dir / "tiny.yaml", yaml);
  auto r = RunCommand(DlioRun() + " --quiet --config " + dir / "tiny.yaml" +
                      " ++workload.train.epochs=2");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  json s = LoadJson(dir / "out/summary.json");
  CHECK(s["metric"]["train_au_percentage"].size() == 2);  // the override won
  CHECK(s["workload"] == "tiny");  // the file's stem, as DLIO names a workload by its YAML
  // checkpoint after epoch 2 in DLIO's layout (framework pytorch): 4 samples / batch 2 = 2 steps,
  // named one past the last step as DLIO names it; no model size: DLIO's default 10240 bytes.
  CHECK(s["metric"]["checkpoint_count"] == 1);
  CHECK(s["metric"]["checkpoint_size_bytes"] == 10240);
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir / "ckpt")) {
    if (e.is_regular_file()) ++files;
  }
  CHECK(files == 1);  // no manifest: DLIO's file counts
  CHECK(fs::file_size(dir / "ckpt/global_epoch2_step3/model_states-0.pt") == 10240);

  // DLIO's step cadence counts each epoch's steps: every 3 steps of 2 epochs of 4 steps is step 3
  // of each (the run's steps 3 and 6 in dlio's own layouts, which checkpoint.type paper keeps).
  r = RunCommand(DlioRun() + " --quiet --no-generate --config " + dir / "tiny.yaml" +
                 " ++workload.train.epochs=2 ++workload.reader.batch_size=1" +
                 " ++workload.checkpoint.steps_between_checkpoints=3" +
                 " ++workload.checkpoint.checkpoint_folder=" + dir / "ckpt-steps" +
                 " ++workload.output.folder=" + dir / "out-steps");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(LoadJson(dir / "out-steps/summary.json")["metric"]["checkpoint_count"] == 2);
  CHECK(fs::file_size(dir / "ckpt-steps/global_epoch1_step3/model_states-0.pt") == 10240);
  CHECK(fs::file_size(dir / "ckpt-steps/global_epoch2_step3/model_states-0.pt") == 10240);
  r = RunCommand(DlioRun() + " --quiet --no-generate --config " + dir / "tiny.yaml" +
                 " ++workload.checkpoint.type=paper ++workload.checkpoint.checkpoint_folder=" +
                 dir / "ckpt-paper" + " ++workload.output.folder=" + dir / "out-paper");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(fs::exists(dir / "ckpt-paper/ckpt-000000/.dlio-complete-rank0"));
  CHECK(fs::file_size(dir / "ckpt-paper/ckpt-000000/rank0-model.bin") == 4194304);
}

TEST_CASE("dlio-run --trace writes a DFTracer trace with every read's file, offset and size") {
  TempDir dir;
  auto r = Run(TinyArgs(dir) + " --trace --set train.epochs=1");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  std::ifstream in(dir / "out/trace-0-of-1.pfw");
  REQUIRE(in);
  std::string line;
  uint64_t read_bytes = 0;
  std::set<std::string> files_read;
  int steps = 0, epochs = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line == "[" || line == "]") continue;
    if (line.back() == ',') line.pop_back();
    json e = json::parse(line);
    if (e["ph"] != "X") continue;
    CHECK(e.contains("ts"));
    CHECK(e.contains("dur"));
    if (e["name"] == "pread" && e["args"].contains("fname")) {
      const std::string f = e["args"]["fname"];
      if (f.find("/data/train/") != std::string::npos) {
        files_read.insert(f);
        CHECK(e["args"]["offset"].get<int64_t>() >= 0);
        read_bytes += e["args"]["ret"].get<uint64_t>();
      }
    }
    if (e["name"] == "compute") ++steps;
    if (e["name"] == "train") ++epochs;
  }
  CHECK(files_read.size() == 6);
  CHECK(read_bytes >= 12ull * 16384);
  CHECK(steps == 6);
  CHECK(epochs == 1);
}

TEST_CASE("dlio-run --trace counts epochs and steps from 1 in every event kind") {
  TempDir dir;
  auto r = Run(TinyArgs(dir) + " --trace --set train.epochs=2");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  std::map<std::string, std::set<int64_t>> epochs;  // event name -> args.epoch values
  std::map<std::string, std::set<int64_t>> steps;   // event name -> args.step values
  for (const json& e : LoadJson(dir / "out/trace-0-of-1.pfw")) {
    if (e["ph"] == "X" && e["args"].contains("epoch")) {
      epochs[e["name"]].insert(e["args"]["epoch"].get<int64_t>());
    }
    if (e["ph"] == "X" && e["args"].contains("step")) {
      steps[e["name"]].insert(e["args"]["step"].get<int64_t>());
    }
  }
  // 6 files x 2 samples, batch 2: steps 1..6 in every kind that has one.
  for (const char* name : {"fetch.iter", "item", "compute"}) {
    INFO(name);
    CHECK(steps[name] == std::set<int64_t>{1, 2, 3, 4, 5, 6});
  }
  for (const char* name : {"train", "fetch.iter", "item", "compute"}) {
    CHECK(epochs.count(name) == 1);
  }
  for (const auto& [name, seen] : epochs) {
    INFO(name);
    CHECK(seen == std::set<int64_t>{1, 2});
  }
}

TEST_CASE("dlio-run list and inspect") {
  auto list = Run("list formats");
  REQUIRE(list.exit_code == 0);
  CHECK(list.output.find("npz") != std::string::npos);
  CHECK(list.output.find("indexed_binary") != std::string::npos);
  auto storages = Run("list storages");
  CHECK(storages.output.find("posix") != std::string::npos);
  CHECK(storages.output.find("slow") != std::string::npos);
  CHECK(Run("list nonsense").exit_code == 2);
  auto keys = Run("list keys --markdown");  // docs/configuration.md's key reference
  REQUIRE(keys.exit_code == 0);
  CHECK(keys.output.find("\n### dataset\n") != std::string::npos);
  CHECK(keys.output.find("| `dataset.num_files_train` | uint | `8` |") != std::string::npos);
  CHECK(keys.output.find("### DLIO keys accepted but not used") != std::string::npos);
  auto markdown_formats = Run("list formats --markdown");
  CHECK(markdown_formats.exit_code == 2);
  CHECK(markdown_formats.output.find("--markdown applies to 'keys' only") != std::string::npos);

  TempDir dir;
  REQUIRE(Run(TinyArgs(dir) + " --no-train").exit_code == 0);
  std::string file;
  for (const auto& e : fs::recursive_directory_iterator(dir / "data")) {
    if (e.path().extension() == ".npz") file = e.path();
  }
  REQUIRE(!file.empty());
  auto insp = Run("inspect " + file);
  INFO(insp.output);
  REQUIRE(insp.exit_code == 0);
  json j = json::parse(insp.output);
  CHECK(j["num_samples"] == 2);
  CHECK(Run("inspect " + dir / "nope.npz").exit_code != 0);
}

TEST_CASE("dlio-run decodes images on the preprocessing threads with reader.decode") {
  TempDir dir;
  const std::string args = TinyArgs(dir) +
                           " --set dataset.format=png --set dataset.num_samples_per_file=1"
                           " --set dataset.record_length_bytes=4096 --set reader.decode=true"
                           " --set reader.computation_threads=2 --trace";
  auto r = Run(args);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  // Every sample read once per epoch was decoded once: a preprocess event per item event.
  int items = 0, preprocess = 0;
  std::istringstream lines(ReadTextFile(dir / "out/trace-0-of-1.pfw"));
  std::string line;
  while (std::getline(lines, line)) {
    if (line.find("\"item\"") != std::string::npos) ++items;
    if (line.find("\"preprocess\"") != std::string::npos) ++preprocess;
  }
  CHECK(items == 2 * 6);
  CHECK(preprocess == items);
  // I/O is counted in stored (encoded) bytes, not decoded pixels.
  json s = LoadJson(dir / "out/summary.json");
  CHECK(s["metric"]["train_io_mean_MiB_per_second"].get<double>() > 0);

  // A format without a decoder is refused before anything is generated.
  TempDir other;
  auto bad = Run(TinyArgs(other) + " --set reader.decode=true");
  CHECK(bad.exit_code != 0);
  CHECK(bad.output.find("has no decoder") != std::string::npos);
  CHECK_FALSE(fs::exists(other / "data"));
}

TEST_CASE("dlio-run refuses runs that cannot work here with exit 2, by key, before generating") {
  // Issue 9, defect 6: these aborted (rc 134), grew for minutes or failed only after generation.
  struct Case {
    std::string args;
    std::string key;
  };
  const Case cases[] = {
      {" --set dataset.num_files_train=1e12", "dataset.num_files_train"},
      {" --set dataset.num_samples_per_file=18446744073709551615", "dataset.num_samples_per_file"},
      {" --set dataset.num_samples_per_file=1e12", "dataset.num_samples_per_file"},
      {" --set reader.batch_size=1e12", "reader.batch_size"},
      {" --set dataset.num_files_train=1e8", "dataset.num_files_train"},
      {" --set reader.read_threads=100000", "reader.read_threads"},
      {" --set reader.prefetch_size=1e12", "reader.prefetch_size"},
      {" --set train.computation_time=1e12", "train.computation_time"},
      {" --set dataset.record_length_bytes=1TiB --no-train", "dataset.record_length_bytes"},
      {" --set reader.batch_size=13", "reader.batch_size"},  // 12 samples: no step
  };
  for (const Case& c : cases) {
    TempDir dir;
    auto r = Run(TinyArgs(dir) + c.args);
    INFO(c.args << "\n" << r.output);
    CHECK(r.exit_code == 2);
    CHECK(r.output.find(c.key) != std::string::npos);
    CHECK_FALSE(fs::exists(dir / "data"));
  }
}

TEST_CASE("dlio-run refuses a config file with a key given twice, naming it and both lines") {
  TempDir dir;
  WriteTextFile(dir / "twice.yaml",
                "dataset:\n  num_files_train: 4\n  format: npz\n  num_files_train: 8\n");
  auto r = Run("--config " + dir / "twice.yaml" + TinyArgs(dir));
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("duplicate key 'dataset.num_files_train' (in " + dir / "twice.yaml" +
                      " lines 2 and 4)") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "data"));

  // A FIFO as config is refused at once (it used to block for ever), also with exit 2.
  const std::string fifo = dir / "fifo.yaml";
  REQUIRE(RunCommand("mkfifo " + fifo).exit_code == 0);
  auto f = RunCommand("timeout 20 " + DlioRun() + " --config " + fifo + TinyArgs(dir));
  INFO(f.output);
  CHECK(f.exit_code == 2);
  CHECK(f.output.find("is a FIFO, not a regular file") != std::string::npos);
}
