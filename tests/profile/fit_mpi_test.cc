// `dlio-run fit` on the traces of a 2-rank run, in closed loops under mpiexec: dlio-run runs a
// known workload with 2 ranks under --trace, fit derives the workload from the ranks' traces, the
// fitted YAML runs again with 2 ranks, and `dlio-run compare` finds the same requests.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "dlio/config.h"
#include "test_util.h"

namespace dlio {
namespace {

using testing::ReadTextFile;
using testing::RunCommand;
using testing::TempDir;

std::string DlioRun() { return std::string(DLIO_BINARY_DIR) + "/apps/dlio-run/dlio-run"; }
std::string Mpi() { return std::string(DLIO_MPIEXEC) + " -n 2 "; }

WorkloadConfig Load(const std::string& path) {
  auto c = LoadConfigFile(path);
  INFO(path << ": " << c.status().ToString() << "\n" << ReadTextFile(path));
  REQUIRE(c.ok());
  return std::move(c).value();
}

// Runs `args` with 2 ranks under --trace into dir/out, fits dir/out (both ranks' traces) into
// dir/fit.yaml, runs that with 2 ranks into dir/out2 and compares the two. Returns the original's
// config and the fitted one.
std::pair<WorkloadConfig, WorkloadConfig> ClosedLoop(const TempDir& dir, const std::string& args) {
  auto run = RunCommand("timeout 120 " + Mpi() + DlioRun() + " --quiet --generate --trace" + args +
                        " --set dataset.data_folder=" + dir / "data" +
                        " --set checkpoint.checkpoint_folder=" + dir / "ckpt" +
                        " --set output.folder=" + dir / "out");
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  auto fit = RunCommand(DlioRun() + " fit " + dir / "out" + " -o " + dir / "fit.yaml");
  INFO(fit.output);
  REQUIRE(fit.exit_code == 0);
  const std::string yaml = ReadTextFile(dir / "fit.yaml");
  INFO(yaml);
  CHECK(yaml.find("mpirun -n 2 dlio-run --config") != std::string::npos);
  auto again = RunCommand("timeout 120 " + Mpi() + DlioRun() + " --quiet --trace --config " +
                          dir / "fit.yaml" + " --set dataset.data_folder=" + dir / "gen" +
                          " --set checkpoint.checkpoint_folder=" + dir / "ckpt2" +
                          " --set output.folder=" + dir / "out2");
  INFO(again.output);
  CHECK(again.exit_code == 0);
  // compare reads every rank's trace of each directory.
  auto cmp = RunCommand(DlioRun() + " compare --json " + dir / "out" + " " + dir / "out2" + " -o " +
                        dir / "cmp.json");
  INFO(cmp.output);
  REQUIRE(cmp.exit_code == 0);
  const nlohmann::json c = nlohmann::json::parse(ReadTextFile(dir / "cmp.json"), nullptr, false);
  REQUIRE(c.is_object());
  INFO(c.dump(1));
  CHECK(c["similarity"].get<double>() >= 0.93);
  CHECK(c["ks"]["request_size"]["d"].get<double>() < 0.1);
  return {Load(dir / "out/config.json"), Load(dir / "fit.yaml")};
}

// Per rank: batch and threads; global: files and samples per file; the run's epochs.
void CheckSameWorkload(const WorkloadConfig& want, const WorkloadConfig& got) {
  CHECK(got.dataset.format == want.dataset.format);
  CHECK(got.dataset.num_files_train == want.dataset.num_files_train);
  CHECK(got.dataset.num_samples_per_file == want.dataset.num_samples_per_file);
  CHECK(got.reader.batch_size == want.reader.batch_size);
  CHECK(got.reader.read_threads == want.reader.read_threads);
  CHECK(got.train.epochs == want.train.epochs);
  CHECK(got.train.computation_time.mean == Approx(want.train.computation_time.mean).epsilon(0.5));
}

TEST_CASE("fit closed loop, 2 ranks: npz, 2 threads per rank, block sharding, shuffled") {
  TempDir dir;
  const auto [want, got] = ClosedLoop(
      dir,
      " --workload default --set dataset.num_files_train=16 --set dataset.num_samples_per_file=8"
      " --set train.epochs=2"
      " --set workflow.checkpoint=false --set train.computation_time=0.01"
      " --set reader.io_model=native");
  CheckSameWorkload(want, got);
  CHECK(got.reader.sharding == Sharding::kBlock);
  CHECK_FALSE(got.workflow.checkpoint);
}

TEST_CASE("fit closed loop, 2 ranks: round robin over each file's samples, in order") {
  TempDir dir;
  const auto [want, got] =
      ClosedLoop(dir,
                 " --workload default --set dataset.num_files_train=16"
                 " --set dataset.num_samples_per_file=8 --set train.epochs=2"
                 " --set workflow.checkpoint=false --set train.computation_time=0.01"
                 " --set reader.io_model=native --set reader.sharding=round_robin"
                 " --set reader.file_shuffle=off --set reader.sample_shuffle=off"
                 " --set reader.read_threads=1");
  CheckSameWorkload(want, got);
  CHECK(got.reader.sharding == Sharding::kRoundRobin);
  CHECK(got.reader.file_shuffle == want.reader.file_shuffle);
  CHECK(got.reader.sample_shuffle == want.reader.sample_shuffle);
}

TEST_CASE("fit closed loop, 2 ranks: npy, rank 0 alone checkpoints every 3 steps") {
  TempDir dir;
  const auto [want, got] =
      ClosedLoop(dir,
                 " --set dataset.format=npy --set dataset.num_files_train=12"
                 " --set dataset.num_samples_per_file=2 --set dataset.record_length_bytes=32768"
                 " --set reader.batch_size=2 --set reader.read_threads=2 --set train.epochs=2"
                 " --set train.computation_time=0.01 --set reader.file_shuffle=seed"
                 " --set reader.sample_shuffle=seed --set workflow.checkpoint=true"
                 " --set checkpoint.type=model --set checkpoint.model_size_bytes=131072"
                 " --set checkpoint.steps_between_checkpoints=3 --set checkpoint.rank_mode=root");
  CheckSameWorkload(want, got);
  CHECK(got.workflow.checkpoint);
  CHECK(got.checkpoint.rank_mode == want.checkpoint.rank_mode);
  CHECK(got.checkpoint.model_size_bytes == 131072);
  CHECK(got.checkpoint.steps_between_checkpoints == 3);
}

TEST_CASE("fit closed loop, 2 ranks: every rank checkpoints its share") {
  TempDir dir;
  const auto [want, got] =
      ClosedLoop(dir,
                 " --set dataset.format=npy --set dataset.num_files_train=12"
                 " --set dataset.num_samples_per_file=2 --set dataset.record_length_bytes=32768"
                 " --set reader.batch_size=2 --set reader.read_threads=2 --set train.epochs=2"
                 " --set train.computation_time=0.01 --set workflow.checkpoint=true"
                 " --set checkpoint.type=model --set checkpoint.model_size_bytes=131072"
                 " --set checkpoint.steps_between_checkpoints=3 --set checkpoint.rank_mode=all");
  CheckSameWorkload(want, got);
  CHECK(got.checkpoint.rank_mode == want.checkpoint.rank_mode);
  CHECK(got.checkpoint.model_size_bytes == 131072);  // the sum of the two ranks' halves
}

}  // namespace
}  // namespace dlio
