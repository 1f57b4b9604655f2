// A few upstream workload configs and new presets run through dlio-run, shrunk with DLIO's
// override syntax: DLIO's default.yaml and MLPerf Storage's unet3d_h100.yaml unchanged from the
// peers folder, and MLPerf Storage v3.0's retinanet_b200 preset by name. (Every upstream config
// loads and validates in presets_test; the three *_s3.yaml load there but are not run here: their
// s3://bucket data folders need the s3 storage's bucket handling and a server.)
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

#include "test_util.h"

namespace fs = std::filesystem;
using dlio::testing::CommandResult;
using dlio::testing::RunCommand;
using dlio::testing::TempDir;

namespace {

using dlio::testing::DlioRun;

// 3 files of one 4 KiB sample (jpeg holds one image per file), batch 2, one epoch, no compute,
// inside `dir`.
std::string Tiny(const TempDir& dir) {
  return " --quiet --generate ++workload.dataset.data_folder=" + dir / "data" +
         " ++workload.output.folder=" + dir / "out" +
         " ++workload.checkpoint.checkpoint_folder=" + dir / "ckpt" +
         " ++workload.dataset.num_files_train=3 ++workload.dataset.num_files_eval=1"
         " ++workload.dataset.num_samples_per_file=1 ++workload.dataset.record_length_bytes=4096"
         " ++workload.dataset.record_length_bytes_stdev=0 ++workload.reader.batch_size=2"
         " ++workload.reader.read_threads=1 ++workload.train.epochs=1"
         " ++workload.train.computation_time=0 ++workload.evaluation.eval_time=0";
}

fs::path Peers() { return dlio::testing::PeersDirOrSkip(DLIO_PEERS_DIR, "dlio_benchmark-e1919d7"); }

}  // namespace

TEST_CASE("upstream configs run shrunk through dlio-run") {
  const fs::path peers = Peers();
  for (const fs::path& config :
       {peers / "dlio_benchmark-e1919d7/configs/workload/default.yaml",
        peers / "mlcommons-storage-caa90c9/configs/dlio/workload/unet3d_h100.yaml"}) {
    INFO(config.string());
    TempDir dir;
    const CommandResult r = RunCommand(DlioRun() + " --config " + config.string() + Tiny(dir));
    INFO(r.output);
    CHECK(r.exit_code == 0);
    CHECK(fs::exists(fs::path(dir / "out") / "summary.json"));
  }
  TempDir dir;
  const CommandResult r = RunCommand(DlioRun() + " --workload retinanet_b200" + Tiny(dir));
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(fs::exists(fs::path(dir / "out") / "summary.json"));
}

// MLPerf Storage v3.0's parquet presets, shrunk: 2 files of 12 rows in row groups of 4, their own
// columns (dlrm_mi355: 200, 40 read; flux: its five float32 lists, t5_encodings cut to 64 values).
TEST_CASE("MLPerf v3.0 dlrm and flux presets run shrunk through dlio-run") {
  const std::string common =
      " ++workload.dataset.num_files_train=2 ++workload.dataset.num_samples_per_file=12"
      " ++workload.dataset.parquet.row_group_size=4 ++workload.reader.batch_size=4"
      " ++workload.reader.read_threads=1 ++workload.train.computation_time=0";
  for (const char* name : {"dlrm_b200", "dlrm_mi355", "flux_b200", "flux_mi355"}) {
    INFO(name);
    TempDir dir;
    std::string cmd = DlioRun() + " --workload " + name + " --quiet --generate" +
                      " ++workload.dataset.data_folder=" + dir / "data" +
                      " ++workload.output.folder=" + dir / "out" + common;
    if (std::string(name).rfind("flux", 0) == 0) {
      cmd +=
          " '++workload.dataset.parquet.columns=[{name: t5_encodings, size: 64},"
          " {name: clip_encodings, size: 409}, {name: mean, size: 8232},"
          " {name: logvar, size: 8232}, {name: timestamp, size: 7}]'";
    }
    const CommandResult r = RunCommand(cmd);
    INFO(r.output);
    CHECK(r.exit_code == 0);
    CHECK(fs::exists(fs::path(dir / "out") / "summary.json"));
  }
}
