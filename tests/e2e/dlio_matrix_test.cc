// The Python DLIO's test matrix (e1919d7 tests/dlio_benchmark_test.py), ported to dlio-run
// invocations of its default workload (preset dlio_default, DLIO's `config` = default.yaml) with
// the same overrides, shrunk: 1 KiB records, computation and eval time 0, 1 epoch. Upstream asserts
// that each run completes; we also count what it made and did: the data files per folder (as
// test_gen_data counts them), and the AI-logging compute and fetch.iter events of the trace
// (steps, as dlio_ai_logging_test.py counts them). test_checkpoint_epoch / _step run here at 2
// ranks under mpiexec (their 1- and 2-rank file plans are also checked in
// tests/checkpoint/transformer_checkpoint_test.cc); the AI-logging matrix and s3 are ported
// elsewhere (docs/testing.md lists where).
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.h"

namespace dlio::testing {
namespace {

namespace fs = std::filesystem;

using dlio::testing::DlioRun;

// Files under `dir` (recursively) whose name ends in ".<ext>".
int CountFiles(const fs::path& dir, const std::string& ext) {
  if (!fs::exists(dir)) return 0;
  int n = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (e.is_regular_file() && name.size() > ext.size() + 1 &&
        name.compare(name.size() - ext.size() - 1, std::string::npos, "." + ext) == 0) {
      ++n;
    }
  }
  return n;
}

// Lines of the trace with cat `cat` and name `name` (DLIO's check_ai_events).
int CountEvents(const std::string& trace, const std::string& cat, const std::string& name) {
  std::istringstream lines(trace);
  std::string line;
  int n = 0;
  while (std::getline(lines, line)) {
    if (line.find("\"cat\":\"" + cat + "\"") != std::string::npos &&
        line.find("\"name\":\"" + name + "\"") != std::string::npos) {
      ++n;
    }
  }
  return n;
}

struct Case {
  std::string name;       // upstream test and parameters
  std::string overrides;  // DLIO's ++workload.* overrides, after the common ones (data_folder
                          // "<tmp>/data" unless they set storage.storage_root and their own)
  std::string ext;        // data files' extension (the format's name, as DLIO names them)
  int train_files, eval_files;
  int steps;  // train steps + eval steps of the one epoch (compute and fetch.iter events)
};

// dlio-run (under `launcher` when not "") with the common overrides, then `overrides`.
std::string Command(const TempDir& dir, const std::string& launcher, const std::string& overrides) {
  const bool own_folder = overrides.find("storage.storage_root") != std::string::npos;
  return launcher + DlioRun() + " -w dlio_default --quiet --trace" +
         (own_folder ? std::string() : " ++workload.dataset.data_folder=" + dir / "data") +
         " ++workload.output.folder=" + dir / "out" +
         " ++workload.dataset.record_length_bytes=1024"
         " ++workload.train.epochs=1 ++workload.train.computation_time=0"
         " ++workload.evaluation.eval_time=0 ++workload.dataset.num_files_eval=2" +
         overrides;
}

// Generates and trains in one dlio-run, as upstream's run_benchmark with generate_data=True
// (`data` is where the dataset lands, relative to the case's folder).
void RunCase(const Case& c, const std::string& data = "data") {
  INFO(c.name);
  TempDir dir;
  std::string overrides = " -g" + c.overrides;
  size_t at = 0;  // "@" in the overrides: the case's folder
  while ((at = overrides.find('@', at)) != std::string::npos) overrides.replace(at, 1, dir.path());
  const std::string cmd = Command(dir, "", overrides);
  const auto r = RunCommand(cmd);
  INFO(cmd << "\n" << r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(CountFiles(dir / (data + "/train"), c.ext) == c.train_files);
  CHECK(CountFiles(dir / (data + "/valid"), c.ext) == c.eval_files);
  const std::string trace = ReadTextFile(dir / "out/trace-0-of-1.pfw");
  CHECK(CountEvents(trace, "compute", "compute") == c.steps);
  CHECK(CountEvents(trace, "dataloader", "fetch.iter") == c.steps);
}

// test_train: formats x (framework, data_loader) x even (16 files) / odd (17), read_threads 1.
// 16 and 17 files of one sample at batch 4 are 4 steps (the last partial batch dropped), plus
// the 2 eval files at batch_size_eval 1.
TEST_CASE("DLIO's test_train matrix: formats x frameworks x loaders x even/odd") {
  const std::vector<std::string> formats = {"png",  "npz", "jpeg",           "tfrecord",
                                            "hdf5", "csv", "indexed_binary", "mmap_indexed_binary"};
  const std::vector<std::pair<std::string, std::string>> stacks = {{"tensorflow", "tensorflow"},
                                                                   {"pytorch", "pytorch"},
                                                                   {"tensorflow", "dali"},
                                                                   {"pytorch", "dali"}};
  for (const std::string& fmt : formats) {
    for (const auto& [framework, loader] : stacks) {
      // Upstream runs tfrecord with tensorflow's loader only.
      if (fmt == "tfrecord" && loader != "tensorflow") continue;
      for (int files : {16, 17}) {
        RunCase({"test_train " + fmt + " " + framework + " " + loader + " " + std::to_string(files),
                 " ++workload.framework=" + framework + " ++workload.reader.data_loader=" + loader +
                     " ++workload.dataset.format=" + fmt + " ++workload.dataset.num_files_train=" +
                     std::to_string(files) + " ++workload.reader.read_threads=1",
                 fmt, files, 2, 4 + 2});
      }
    }
  }
}

TEST_CASE("DLIO's thread, multiprocessing-context, eval and distribution tests") {
  std::vector<Case> cases;
  // test_multi_threads: 8 train and 8 eval files (we keep 2 eval files: 8 + 2 steps at 1 per batch
  // of 4 -> 2 train steps).
  for (const char* framework : {"tensorflow", "pytorch"}) {
    for (int nt : {0, 1, 2}) {
      cases.push_back({std::string("test_multi_threads ") + framework + " " + std::to_string(nt),
                       std::string(" ++workload.framework=") + framework +
                           " ++workload.reader.data_loader=" + framework +
                           " ++workload.reader.read_threads=" + std::to_string(nt) +
                           " ++workload.dataset.num_files_train=8",
                       "npz", 8, 2, 2 + 2});
    }
  }
  // test_pytorch_multiprocessing_context (DLIO passes None for nt 0).
  for (const auto& [nt, context] :
       std::vector<std::pair<int, std::string>>{{1, "fork"}, {2, "spawn"}, {2, "forkserver"}}) {
    cases.push_back({"test_pytorch_multiprocessing_context " + context,
                     " ++workload.framework=pytorch ++workload.reader.data_loader=pytorch"
                     " ++workload.reader.read_threads=" +
                         std::to_string(nt) + " ++workload.reader.multiprocessing_context=" +
                         context + " ++workload.dataset.num_files_train=8",
                     "npz", 8, 2, 2 + 2});
  }
  // test_computation_time_distribution: each of upstream's forms through sub-key overrides
  // (values scaled from seconds to 10 us so the case stays cheap).
  for (const auto& [dist, keys] : std::vector<std::pair<std::string, std::string>>{
           {"uniform",
            "type=uniform ++workload.train.computation_time.min=0.00001"
            " ++workload.train.computation_time.max=0.00002"},
           {"normal",
            "type=normal ++workload.train.computation_time.mean=0.00001"
            " ++workload.train.computation_time.stdev=0.00001"},
           {"gamma",
            "type=gamma ++workload.train.computation_time.shape=1.0"
            " ++workload.train.computation_time.scale=0.00001"},
           {"exp", "type=exponential ++workload.train.computation_time.scale=0.00001"},
           {"normal_v2", "mean=0.00001"},
           {"normal_v3", "mean=0.00001 ++workload.train.computation_time.stdev=0.00001"}}) {
    cases.push_back(
        {"test_computation_time_distribution " + dist,
         " ++workload.dataset.num_files_train=8 ++workload.train.computation_time." + keys, "npz",
         8, 2, 2 + 2});
  }
  // test_eval: 4 epochs with evaluation (1 epoch here: the events per epoch are the point).
  cases.push_back({"test_eval",
                   " ++workload.workflow.evaluation=True ++workload.dataset.num_files_train=8",
                   "npz", 8, 2, 2 + 2});
  for (const Case& c : cases) RunCase(c);
}

// test_storage_root_gen_data and test_custom_storage_root_train: data_folder relative to
// storage.storage_root, generated (file counts under the root) and trained on.
TEST_CASE("DLIO's storage_root tests: generate and train under storage.storage_root") {
  for (const char* fmt :
       {"png", "npz", "jpeg", "tfrecord", "hdf5", "csv", "indexed_binary", "mmap_indexed_binary"}) {
    for (const char* framework : {"tensorflow", "pytorch"}) {
      if (std::string(fmt) == "tfrecord" && std::string(framework) == "pytorch") continue;
      RunCase({std::string("test_custom_storage_root_train ") + fmt + " " + framework,
               std::string(" ++workload.storage.storage_root=@/root_dir"
                           " ++workload.dataset.data_folder=data/x") +
                   " ++workload.framework=" + framework + " ++workload.reader.data_loader=" +
                   framework + " ++workload.dataset.format=" + fmt +
                   " ++workload.dataset.num_files_train=16 ++workload.reader.read_threads=1",
               fmt, 16, 2, 4 + 2},
              "root_dir/data/x");
    }
  }
}

// test_subset: generate the default's 64 files, then train on the first 8 without generating.
TEST_CASE("DLIO's test_subset: train on the first files of a larger dataset") {
  TempDir dir;
  auto gen = RunCommand(Command(dir, "", " -g --no-train"));
  INFO(gen.output);
  REQUIRE(gen.exit_code == 0);
  REQUIRE(CountFiles(dir / "data/train", "npz") == 64);
  auto train = RunCommand(Command(dir, "", " --no-generate ++workload.dataset.num_files_train=8"));
  INFO(train.output);
  REQUIRE(train.exit_code == 0);
  const std::string trace = ReadTextFile(dir / "out/trace-0-of-1.pfw");
  CHECK(CountEvents(trace, "compute", "compute") == 8 / 4 + 2);
}

#ifdef DLIO_MPIEXEC
// test_uneven_samples_deadlock at 3 ranks, 3 epochs: every rank runs the same steps (no rank
// waits at a barrier the others never reach). Upstream's npz pytorch cases; its tensorflow ones
// run the same loop in dlio.
TEST_CASE("DLIO's test_uneven_samples_deadlock at 3 ranks") {
  for (const auto& [files, batch] :
       std::vector<std::pair<int, int>>{{13, 4}, {24, 4}, {25, 4}, {145, 16}}) {
    INFO(files << " files, batch " << batch);
    TempDir dir;
    const std::string cmd = Command(
        dir, std::string(DLIO_MPIEXEC) + " -n 3 ",
        " -g ++workload.framework=pytorch ++workload.reader.data_loader=pytorch"
        " ++workload.dataset.num_files_eval=3 ++workload.train.epochs=3"
        " ++workload.reader.read_threads=1 ++workload.reader.batch_size=" +
            std::to_string(batch) + " ++workload.dataset.num_files_train=" + std::to_string(files));
    const auto r = RunCommand(cmd);
    INFO(cmd << "\n" << r.output);
    REQUIRE(r.exit_code == 0);
    // Per rank: files / 3 samples in whole batches, plus 1 eval sample (batch 1), per epoch.
    const int steps = 3 * (files / 3 / batch + 1);
    for (int rank = 0; rank < 3; ++rank) {
      const std::string trace =
          ReadTextFile(dir / ("out/trace-" + std::to_string(rank) + "-of-3.pfw"));
      CHECK(CountEvents(trace, "compute", "compute") == steps);
      CHECK(CountEvents(trace, "dataloader", "fetch.iter") == steps);
    }
  }
}
// Every file of every checkpoint folder under `root` (DLIO's glob("*/*")): folder -> file -> size.
std::map<std::string, std::map<std::string, uintmax_t>> CheckpointFiles(const fs::path& root) {
  std::map<std::string, std::map<std::string, uintmax_t>> out;
  if (!fs::exists(root)) return out;
  for (const auto& folder : fs::directory_iterator(root)) {
    if (!folder.is_directory()) continue;
    auto& files = out[folder.path().filename().string()];
    for (const auto& f : fs::directory_iterator(folder.path())) {
      files[f.path().filename().string()] = f.file_size();
    }
  }
  return out;
}

// test_checkpoint_epoch at 2 ranks (tensor parallelism = the rank count, as upstream sets it):
// 8 epochs, a checkpoint every 2; per checkpoint and rank r the model_states-r state, the layers
// in zero_pp_rank_0_mp_rank_r_model_states and the optimizer's
// zero_pp_rank_0_mp_rank_r_optim_states
// (.pt for pytorch; .pb-1.index + .pb-1.data-00000-of-00001 each for tensorflow, plus the folder's
// "checkpoint" file): upstream's epochs / epoch_per_ckp x (3 x nranks [x 2, + 1]) files.
TEST_CASE("DLIO's test_checkpoint_epoch and test_checkpoint_step at 2 ranks") {
  const std::string mpi = std::string(DLIO_MPIEXEC) + " -n 2 ";
  const std::string common =
      " ++workload.workflow.evaluation=False ++workload.workflow.checkpoint=True"
      " ++workload.train.epochs=8 ++workload.reader.read_threads=1";
  for (const auto& [framework, zero_stage] :
       std::vector<std::pair<std::string, int>>{{"tensorflow", 0}, {"pytorch", 3}}) {
    INFO(framework << ", zero_stage " << zero_stage);
    TempDir dir;
    const std::string cmd = Command(
        dir, mpi,
        " -g" + common + " ++workload.framework=" + framework +
            " ++workload.reader.data_loader=" + framework +
            " ++workload.dataset.num_files_train=8"  // 1 step per rank and epoch
            " ++workload.checkpoint.checkpoint_folder=" +
            dir / "checkpoints" +
            " ++workload.checkpoint.epochs_between_checkpoints=2"
            " ++workload.model.model_size=1024 ++workload.model.optimization_groups=[1024,128]"
            " ++workload.model.num_layers=2 ++workload.model.layer_parameters=[16]"
            " ++workload.model.parallelism.tensor=2"
            " ++workload.model.parallelism.zero_stage=" +
            std::to_string(zero_stage));
    const auto r = RunCommand(cmd);
    INFO(cmd << "\n" << r.output);
    REQUIRE(r.exit_code == 0);
    const bool tf = framework == "tensorflow";
    std::set<std::string> expected;
    for (int rank = 0; rank < 2; ++rank) {
      const std::string mp = "zero_pp_rank_0_mp_rank_" + std::to_string(rank);
      for (const std::string& stem :
           {"model_states-" + std::to_string(rank), mp + "_model_states", mp + "_optim_states"}) {
        if (tf) {
          expected.insert(stem + ".pb-1.index");
          expected.insert(stem + ".pb-1.data-00000-of-00001");
        } else {
          expected.insert(stem + ".pt");
        }
      }
    }
    if (tf) expected.insert("checkpoint");
    const auto folders = CheckpointFiles(dir / "checkpoints");
    size_t total = 0;
    std::set<std::string> epochs;
    for (const auto& [folder, files] : folders) {
      INFO(folder);
      epochs.insert(folder.substr(0, folder.rfind('_')));
      std::set<std::string> names;
      for (const auto& [name, size] : files) names.insert(name);
      CHECK(names == expected);
      CHECK(files.at(tf ? "model_states-1.pb-1.data-00000-of-00001" : "model_states-1.pt") == 1024);
      if (tf) {  // dlio's stand-ins for TensorFlow's sizes (docs/workloads.md)
        CHECK(files.at("zero_pp_rank_0_mp_rank_1_optim_states.pb-1.index") == 512);
        const std::string last = "\"zero_pp_rank_0_mp_rank_0_optim_states.pb-1\"\n";
        CHECK(files.at("checkpoint") ==
              ("model_checkpoint_path: " + last + "all_model_checkpoint_paths: " + last).size());
      }
      total += files.size();
    }
    CHECK(epochs == std::set<std::string>{"global_epoch1", "global_epoch3", "global_epoch5",
                                          "global_epoch7"});
    const size_t files_per_checkpoint = 3 * 2;
    CHECK(total == 8 / 2 * (tf ? files_per_checkpoint * 2 + 1 : files_per_checkpoint));
  }

  // test_checkpoint_step: the default workload (pytorch, no model keys) every 2 steps; 16 files /
  // batch 4 / 2 ranks is 2 steps per epoch, so one save per epoch: nstep // 2 x 8 files, each
  // rank 0's model_states-0.pt of DLIO's default 10240 bytes (rank 1 is a replica).
  TempDir dir;
  const std::string cmd =
      Command(dir, mpi,
              " -g" + common + " ++workload.dataset.num_files_train=16" +
                  " ++workload.checkpoint.checkpoint_folder=" + dir / "checkpoints" +
                  " ++workload.checkpoint.steps_between_checkpoints=2");
  const auto r = RunCommand(cmd);
  INFO(cmd << "\n" << r.output);
  REQUIRE(r.exit_code == 0);
  const auto folders = CheckpointFiles(dir / "checkpoints");
  size_t total = 0;
  for (const auto& [folder, files] : folders) {
    INFO(folder);
    REQUIRE(files.size() == 1);
    CHECK(files.count("model_states-0.pt") == 1);
    CHECK(files.begin()->second == 10240);
    total += files.size();
  }
  CHECK(folders.count("global_epoch8_step2") == 1);
  CHECK(total == 16 / 4 / 2 / 2 * 8);
}
#endif

}  // namespace
}  // namespace dlio::testing
