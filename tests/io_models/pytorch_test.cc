// reader.io_model pytorch held against a real torch.utils.data.DataLoader over the same npz
// files: the same files are read by the same number of worker processes, each reading whole
// batches (batch i by worker i % num_workers), and the main process reads none of them.
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "request_log.h"
#include "test_util.h"

namespace dlio {
namespace {

using io_model_test::Request;
using io_model_test::RequestsOf;
using io_model_test::TracePythonProgram;
using testing::RunCommand;
using testing::TempDir;

constexpr int kSkipped = 77;

// Files in the order each process first read them, for the processes that read any.
std::vector<std::vector<std::string>> FilesByProcess(const std::vector<Request>& requests) {
  std::map<int32_t, std::vector<std::string>> by_pid;
  for (const Request& r : requests) {
    auto& files = by_pid[r.pid];
    if (std::find(files.begin(), files.end(), r.file) == files.end()) files.push_back(r.file);
  }
  std::vector<std::vector<std::string>> out;
  for (auto& [pid, files] : by_pid) out.push_back(files);
  std::sort(out.begin(), out.end());
  return out;
}

std::string Show(const std::vector<std::vector<std::string>>& groups) {
  std::string s;
  for (const auto& g : groups) {
    s += "process:";
    for (const auto& f : g) s += " " + f;
    s += "\n";
  }
  return s;
}

TEST_CASE("io_model pytorch: the files of a real DataLoader's workers, worker by worker") {
  const std::string python = testing::SystemPython();
  if (RunCommand("'" + python + "' -c 'import torch'").exit_code != 0) {
    std::fprintf(stderr, "SKIPPED: %s cannot import torch (Debian package python3-torch)\n",
                 python.c_str());
    std::fflush(stderr);
    std::exit(kSkipped);
  }
  // Two shapes: 8 files in batches of 2, 12 files in batches of 1.
  const auto [files, batch] = GENERATE(table<int, int>({{8, 2}, {12, 1}}));
  const int workers = 2;
  TempDir tmp;
  // dlio: generate the npz files and read them with the pytorch model, traced.
  const std::string dlio_run = std::string(DLIO_BINARY_DIR) + "/apps/dlio-run/dlio-run";
  const std::string args =
      " --quiet --set dataset.data_folder=" + tmp / "data" + " --set output.folder=" + tmp / "out" +
      " --set checkpoint.checkpoint_folder=" + tmp / "ckpt" +
      " --set dataset.format=npz --set dataset.num_files_train=" + std::to_string(files) +
      " --set dataset.num_samples_per_file=1 --set dataset.record_length_bytes=8192"
      " --set reader.data_loader=pytorch --set reader.read_threads=" +
      std::to_string(workers) + " --set reader.batch_size=" + std::to_string(batch) +
      " --set reader.file_shuffle=off --set reader.sample_shuffle=off"
      " --set train.epochs=1 --set train.computation_time=0 --set output.trace=true";
  const auto run = RunCommand(dlio_run + args);
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  ProfileTrace emulated;
  int worker_traces = 0;
  for (const auto& e : std::filesystem::directory_iterator(tmp / "out")) {
    const std::string name = e.path().filename().string();
    if (name.rfind("trace-", 0) != 0 || e.path().extension() != ".pfw") continue;
    worker_traces += name.find("-worker-") != std::string::npos;
    REQUIRE(ImportPfw(e.path().string(), &emulated).ok());
  }
  REQUIRE(worker_traces == workers);
  const std::string train = tmp / "data/train";

  // The real DataLoader over the same files (sorted, as dlio lists them), fork workers.
  const std::string script = tmp / "loader.py";
  testing::WriteTextFile(
      script,
      "import glob, os, sys\n"
      "import numpy as np\n"
      "import torch\n"
      "from torch.utils.data import DataLoader, Dataset\n"
      "class Npz(Dataset):\n"
      "    def __init__(self, d):\n"
      "        self.paths = sorted(glob.glob(os.path.join(d, '*.npz')))\n"
      "    def __len__(self):\n"
      "        return len(self.paths)\n"
      "    def __getitem__(self, i):\n"
      "        with np.load(self.paths[i]) as z:\n"
      "            return torch.tensor(float(z['x'].sum()))\n"
      "loader = DataLoader(Npz(sys.argv[1]), batch_size=int(sys.argv[2]), num_workers=2,\n"
      "                    multiprocessing_context='fork', drop_last=True)\n"
      "print(sum(float(b.sum()) for b in loader))\n");
  const ProfileTrace real = TracePythonProgram(
      "'" + script + "' '" + train + "' " + std::to_string(batch), train, tmp / "prof");

  const auto real_groups = FilesByProcess(RequestsOf(real, train));
  const auto dlio_groups = FilesByProcess(RequestsOf(emulated, train));
  INFO("real DataLoader:\n" << Show(real_groups) << "dlio pytorch:\n" << Show(dlio_groups));
  REQUIRE(real_groups.size() == static_cast<size_t>(workers));  // the main process reads none
  CHECK(dlio_groups == real_groups);
  // Whole batches per worker: batch i (files i*batch ...) by worker i % workers.
  for (const auto& group : dlio_groups) {
    REQUIRE(group.size() == static_cast<size_t>(files / workers));
  }
}

}  // namespace
}  // namespace dlio
