// `dlio-run fit` in closed loops: dlio-run runs a known workload under --trace, fit derives a
// workload from that trace, the fitted workload's keys match the original's, and dlio-run runs
// the fitted YAML. Also: a real Python np.load loop profiled under libdlio_preload.so, and the
// output-file rules.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "checkpoint/torch_save_options.h"
#include "dlio/config.h"
#include "profile/fit_closed_loop.h"
#include "test_util.h"

namespace dlio {
namespace {

using testing::ReadTextFile;
using testing::RunCommand;
using testing::TempDir;
using testing::WriteTextFile;

constexpr int kSkipped = 77;  // the ctest SKIP_RETURN_CODE of this executable

using fit_test::ClosedLoop;
using fit_test::DlioRun;
using fit_test::Load;
using fit_test::ProfileAndFit;

double ComputeMean(const WorkloadConfig& c) { return c.train.computation_time.mean; }

void CheckSameWorkload(const WorkloadConfig& want, const WorkloadConfig& got) {
  CHECK(got.dataset.format == want.dataset.format);
  CHECK(got.dataset.num_files_train == want.dataset.num_files_train);
  CHECK(got.dataset.num_samples_per_file == want.dataset.num_samples_per_file);
  CHECK(static_cast<double>(got.dataset.record_length_bytes) ==
        Approx(static_cast<double>(want.dataset.record_length_bytes)).epsilon(0.02));
  CHECK(got.reader.batch_size == want.reader.batch_size);
  CHECK(got.reader.read_threads == want.reader.read_threads);
  CHECK(got.train.epochs == want.train.epochs);
  // Sleeps overshoot on a loaded machine (2 cores, several builds): 10 ms steps, 50% tolerance.
  CHECK(ComputeMean(got) == Approx(ComputeMean(want)).epsilon(0.5));
  CHECK(got.reader.file_shuffle == want.reader.file_shuffle);
  CHECK(got.reader.sample_shuffle == want.reader.sample_shuffle);
}

TEST_CASE("fit closed loop: the default preset (npz, 2 threads, shuffled, 2 epochs)") {
  TempDir dir;
  const auto [want, got] =
      // Under numpy (npz's default) every sample is a whole-file np.load: the sample shuffle
      // shows only in how the loads of different files interleave. 8 samples per file: 8
      // batches per pass, so both threads read in each pass also on a loaded machine (with 4,
      // one thread read a whole pass in 3 of 6 runs at load 2-3: read_threads 1).
      ClosedLoop(dir,
                 " --workload default --set dataset.num_files_train=8 --set train.epochs=2"
                 " --set dataset.num_samples_per_file=8"
                 " --set workflow.checkpoint=false --set train.computation_time=0.01");
  CheckSameWorkload(want, got);
  CHECK(got.reader.io_model == IoModel::kNumpy);
  CHECK_FALSE(got.workflow.checkpoint);
}

TEST_CASE("fit closed loop: tfrecord read in order by one thread") {
  TempDir dir;
  const auto [want, got] =
      ClosedLoop(dir,
                 " --set dataset.format=tfrecord --set dataset.num_files_train=4"
                 " --set dataset.num_samples_per_file=8 --set dataset.record_length_bytes=20000"
                 " --set reader.batch_size=4 --set reader.read_threads=1 --set train.epochs=2"
                 " --set train.computation_time=0.01 --set reader.file_shuffle=off"
                 " --set reader.sample_shuffle=off");
  CheckSameWorkload(want, got);
}

TEST_CASE("fit closed loop: npy with checkpoints every 3 steps") {
  TempDir dir;
  const auto [want, got] =
      ClosedLoop(dir,
                 " --set dataset.format=npy --set dataset.num_files_train=12"
                 " --set dataset.num_samples_per_file=2 --set dataset.record_length_bytes=32768"
                 " --set reader.batch_size=2 --set reader.read_threads=2 --set train.epochs=2"
                 " --set train.computation_time=0.01 --set reader.file_shuffle=seed"
                 " --set reader.sample_shuffle=seed --set workflow.checkpoint=true"
                 " --set checkpoint.type=model --set checkpoint.model_size_bytes=131072"
                 " --set checkpoint.steps_between_checkpoints=3");
  CheckSameWorkload(want, got);
  CHECK(got.workflow.checkpoint);
  CHECK(got.checkpoint.model_size_bytes == 131072);
  CHECK(got.checkpoint.steps_between_checkpoints == 3);
}

TEST_CASE("fit closed loop: cosmic_tagger (chunked hdf5, steps capped per epoch, checkpoints)") {
  TempDir dir;
  // Under h5py (hdf5's default) every sample opens the file and reads the same headers and
  // B-tree nodes; its chunks, read in B-tree order, tell which sample it is.
  const auto [want, got] = ClosedLoop(dir,
                                      " --workload cosmic_tagger --set scale=0.005"
                                      " --set train.epochs=2 --set train.computation_time=0.01");
  CHECK(got.reader.io_model == IoModel::kH5py);
  CHECK(got.reader.h5py_reopen == want.reader.h5py_reopen);
  CHECK(got.reader.sample_shuffle == want.reader.sample_shuffle);
  CHECK(got.dataset.format == "hdf5");
  CHECK(got.dataset.num_samples_per_file == want.dataset.num_samples_per_file);
  CHECK(got.dataset.enable_chunking);
  CHECK(got.dataset.chunk_size == want.dataset.chunk_size);
  CHECK(got.train.total_training_steps == want.train.total_training_steps);
  CHECK(got.reader.batch_size == want.reader.batch_size);
  CHECK(got.workflow.checkpoint);
}

TEST_CASE("fit closed loop: the frnn preset, small samples read in order, side reads per step") {
  TempDir dir;
  const auto [want, got] = ClosedLoop(dir,
                                      " --workload frnn --set scale=0.002 --set train.epochs=2"
                                      " --set train.computation_time=0.01");
  CheckSameWorkload(want, got);
  CHECK(got.reader.pipeline == want.reader.pipeline);
  CHECK(got.side_io.read_file == want.side_io.read_file);
  CHECK(got.side_io.reads == want.side_io.reads);
  CHECK(got.side_io.read_size == want.side_io.read_size);
  CHECK(got.side_io.schedule == want.side_io.schedule);
  CHECK_FALSE(got.workflow.checkpoint);
}

TEST_CASE("fit: a Python np.load loop over npz files traced by dlio-run profile") {
  const std::string python = testing::SystemPython();
  if (RunCommand("'" + python + "' -c 'import numpy'").exit_code != 0) {
    std::fprintf(stderr, "skipped: Debian's python3 has no numpy\n");
    std::exit(kSkipped);
  }
  TempDir dir;
  const std::string data = dir / "data";
  const std::string script = dir / "loop.py";
  // 6 files of about 300 KB, read whole by np.load, 2 passes, 10 ms of "training" per batch of 2.
  WriteTextFile(script,
                "import os, sys, time\n"
                "import numpy as np\n"
                "d = sys.argv[1]\n"
                "os.makedirs(d + '/train', exist_ok=True)\n"
                "for i in range(6):\n"
                "    np.savez(d + '/train/s%d.npz' % i, x=np.zeros((1, 300000), np.uint8))\n"
                "for epoch in range(2):\n"
                "    for i in range(6):\n"
                "        x = np.load(d + '/train/s%d.npz' % i)['x']\n"
                "        if i % 2 == 1: time.sleep(0.01)\n");
  const std::string yaml = ProfileAndFit(dir, data, "'" + python + "' " + script + " " + data);
  INFO(yaml);
  const WorkloadConfig got = Load(dir / "fit.yaml");
  CHECK(got.dataset.format == "npz");
  CHECK(got.dataset.num_files_train == 6);
  CHECK(got.dataset.num_samples_per_file == 1);
  const double file_size = static_cast<double>(std::filesystem::file_size(data + "/train/s0.npz"));
  CHECK(static_cast<double>(got.dataset.record_length_bytes) == Approx(file_size).epsilon(0.02));
  CHECK(got.train.epochs == 2);
  CHECK(got.reader.batch_size == 2);
  // 10 ms sleeps, longer on a loaded machine.
  CHECK(ComputeMean(got) > 0.008);
  CHECK(ComputeMean(got) < 0.03);
  // numpy, set when this build's npz reader implements it, else commented out saying so.
  const bool numpy_set = got.reader.io_model == IoModel::kNumpy;
  const bool numpy_named = yaml.find("# io_model: auto") != std::string::npos &&
                           yaml.find("looks like numpy") != std::string::npos;
  CHECK((numpy_set || numpy_named));
  // The fitted workload runs.
  auto again = RunCommand(DlioRun() + " --quiet --config " + dir / "fit.yaml" +
                          " --set dataset.data_folder=" + dir / "gen" +
                          " --set output.folder=" + dir / "out2");
  INFO(again.output);
  CHECK(again.exit_code == 0);
}

TEST_CASE("fit: a Python torch.save loop is a checkpoint-only workload that runs") {
  const std::string python = testing::SystemPython();
  if (RunCommand("'" + python + "' -c 'import torch'").exit_code != 0) {
    std::fprintf(stderr, "skipped: Debian's python3 has no torch\n");
    std::exit(kSkipped);
  }
  TempDir dir;
  const std::string ckpt = dir / "ckpt";
  std::filesystem::create_directories(ckpt);
  const std::string script = dir / "save.py";
  // 3 saves of a 256x256 linear layer, one every 2 steps of 20 ms.
  WriteTextFile(script,
                "import sys, time\n"
                "import torch\n"
                "model = torch.nn.Linear(256, 256)\n"
                "for step in range(6):\n"
                "    time.sleep(0.02)\n"
                "    if step % 2 == 1:\n"
                "        torch.save(model.state_dict(), '%s/ckpt_%d.pt' % (sys.argv[1], step))\n");
  INFO(ProfileAndFit(dir, ckpt, "'" + python + "' " + script + " " + ckpt));
  const WorkloadConfig got = Load(dir / "fit.yaml");
  CHECK_FALSE(got.workflow.train);
  CHECK(got.workflow.checkpoint);
  CHECK(got.checkpoint.num_checkpoints_write == 3);
  // torch.save's file, its state dict read back from the checkpoint that is still there.
  CHECK(got.checkpoint.type == "torch_save");
  const TorchSaveOptions torch = got.checkpoint.checkpointers.Value<TorchSaveOptions>();
  CHECK(torch.state_dict == "weight:256x256, bias:256");
  CHECK(torch.modules.empty());
  CHECK(torch.file_name.size() == std::string("ckpt_1.pt").size());
  // Two 20 ms steps between saves, less the save, more under load.
  CHECK(got.checkpoint.time_between_checkpoints > 0.02);
  CHECK(got.checkpoint.time_between_checkpoints < 0.2);
  auto again = RunCommand(DlioRun() + " --quiet --config " + dir / "fit.yaml" +
                          " --set checkpoint.checkpoint_folder=" + dir / "ckpt2" +
                          " --set output.folder=" + dir / "out2");
  INFO(again.output);
  CHECK(again.exit_code == 0);
  CHECK(std::filesystem::exists(dir / "ckpt2/ckpt-000002"));
  // The emulated files are torch.save's, of the traced size.
  CHECK(std::filesystem::file_size(dir / "ckpt2/ckpt-000002/" + torch.file_name) ==
        std::filesystem::file_size(ckpt + "/ckpt_1.pt"));
}

TEST_CASE("dlio-run fit: never replaces a file it did not write, errors name the trace") {
  TempDir dir;
  auto run = RunCommand(DlioRun() +
                        " --quiet --generate --trace --set dataset.num_files_train=2"
                        " --set workflow.checkpoint=false --set dataset.data_folder=" +
                        dir / "data" + " --set output.folder=" + dir / "out");
  REQUIRE(run.exit_code == 0);
  WriteTextFile(dir / "mine.yaml", "dataset: {format: npy}\n");
  auto refused = RunCommand(DlioRun() + " fit " + dir / "out" + " -o " + dir / "mine.yaml");
  CHECK(refused.exit_code == 1);
  CHECK(refused.output.find(dir / "mine.yaml") != std::string::npos);
  CHECK(ReadTextFile(dir / "mine.yaml") == "dataset: {format: npy}\n");
  // An earlier fit output is replaced.
  REQUIRE(RunCommand(DlioRun() + " fit " + dir / "out" + " -o " + dir / "fit.yaml").exit_code == 0);
  WriteTextFile(dir / "fit.yaml", ReadTextFile(dir / "fit.yaml") + "# edited\n");
  CHECK(RunCommand(DlioRun() + " fit " + dir / "out" + " -o " + dir / "fit.yaml").exit_code == 0);
  CHECK(ReadTextFile(dir / "fit.yaml").find("# edited") == std::string::npos);
  // A trace that reads nothing, or is missing, fails naming it.
  WriteTextFile(dir / "empty.pfw", "[\n]\n");
  auto nothing = RunCommand(DlioRun() + " fit " + dir / "empty.pfw");
  CHECK(nothing.exit_code == 2);
  CHECK(nothing.output.find("empty.pfw") != std::string::npos);
  auto missing = RunCommand(DlioRun() + " fit " + dir / "nope");
  CHECK(missing.exit_code == 2);
  CHECK(missing.output.find(dir / "nope") != std::string::npos);
  // A malformed --ignore-paths pattern is refused naming it; `default` and an empty list are
  // accepted.
  auto bad = RunCommand(DlioRun() + " fit " + dir / "out" + " --ignore-paths default,a/b");
  CHECK(bad.exit_code == 2);
  CHECK(bad.output.find("--ignore-paths") != std::string::npos);
  CHECK(bad.output.find("'a/b'") != std::string::npos);
  CHECK(RunCommand(DlioRun() + " fit " + dir / "out" + " --ignore-paths '' --keep-scratch-files")
            .exit_code == 0);
}

}  // namespace
}  // namespace dlio
