// FitTrace on checkpoint folders built by hand: DeepSpeed's global_step<N>/ with a `latest` tag
// and a resume, Megatron's zero-padded iter_<N>, folders that count the saves, one folder for
// every save, and names no rule explains: checkpoint.folder_name and its reason.
#include <catch2/catch.hpp>
#include <functional>
#include <string>

#include "dlio/config.h"
#include "dlio/profile_fit.h"
#include "dlio/str_cat.h"
#include "profile/analysis_test_util.h"
#include "profile/fit_test_util.h"

namespace dlio {
namespace {

using fit_test::Fit;
using fit_test::Value;
using testing::AddEvent;

// One thread reads 32 files of 100 KB in 8 batches of 4, 20 ms of compute after each batch (no
// compute events: the steps are the gaps, and the last batch ends none). After every `every`
// batches a save writes /job/ckpt/<folder(save, step)>/model.pt in two 512 KiB writes, then,
// with `tag`, /job/ckpt/latest in one write of the folder's name. With `resumed` ("" = none),
// the run first reads /job/ckpt/latest and /job/ckpt/<resumed>/model.pt.
struct FolderSaves {
  std::function<std::string(int save, int step)> folder;
  int every = 4;
  bool tag = true;
  std::string resumed;
};

ProfileTrace Build(const FolderSaves& s) {
  ProfileTrace t;
  int64_t now = 1'000'000;
  if (!s.resumed.empty()) {
    AddEvent(&t, 1, 1, "read", now, 5, "/job/ckpt/latest", 0, 13, 12);
    const std::string model = StrCat("/job/ckpt/", s.resumed, "/model.pt");
    AddEvent(&t, 1, 1, "open64", now + 10, 2, model);
    AddEvent(&t, 1, 1, "read", now + 20, 100, model, 0, 1 << 20, 1 << 20);
    now += 10'000;
  }
  int saves = 0;
  for (int b = 0; b < 8; ++b) {
    fit_test::AddBatchReads(&t, 1, b, &now);
    now += 20'000;
    const int step = b + 1;
    if (step % s.every != 0) continue;
    const std::string folder = s.folder(saves++, step);
    const std::string model = StrCat("/job/ckpt/", folder, "/model.pt");
    AddEvent(&t, 1, 1, "open64", now, 2, model);
    AddEvent(&t, 1, 1, "pwrite", now + 3, 100, model, 0, 512 << 10, 512 << 10);
    AddEvent(&t, 1, 1, "pwrite", now + 110, 100, model, 512 << 10, 512 << 10, 512 << 10);
    if (s.tag) {
      const int64_t n = static_cast<int64_t>(folder.size());
      AddEvent(&t, 1, 1, "pwrite", now + 220, 5, "/job/ckpt/latest", 0, n, n);
    }
    now += 1'000;
  }
  return t;
}

TEST_CASE("fit, checkpoint folders: DeepSpeed's global_step<N> after a resume is {step}") {
  FolderSaves s;
  s.resumed = "global_step4";
  // The run resumed at step 4: its 4th and 8th steps are global steps 8 and 12.
  s.folder = [](int, int step) { return StrCat("global_step", step + 4); };
  const FitResult r = Fit(Build(s));
  CHECK(Value(r, "checkpoint.folder_name") == "global_step{step}");
  CHECK(Value(r, "checkpoint.steps_between_checkpoints") == "4");  // the last save's step too
  CHECK(Value(r, "checkpoint.tag_file") == "latest");
  CHECK(Value(r, "checkpoint.resume") == "true");
  const std::string why = r.Find("checkpoint.folder_name")->reason;
  CHECK_THAT(why, Catch::Contains("global_step8, global_step12"));
  CHECK_THAT(why, Catch::Contains("the traced step (4, 8) plus 4"));
  CHECK_THAT(why, Catch::Contains("resumed from global_step4"));
  // The YAML carries it into a config.
  auto config = ParseConfig(FitYaml(r, {"test"}), "fit.yaml");
  INFO(config.status().ToString());
  REQUIRE(config.ok());
  CHECK(config->checkpoint.folder_name == "global_step{step}");
}

TEST_CASE("fit, checkpoint folders: a fresh run's zero-padded steps keep their width") {
  FolderSaves s;
  s.every = 2;
  s.tag = false;
  s.folder = [](int, int step) { return StrCat("iter_000000", step); };
  const FitResult r = Fit(Build(s));
  CHECK(Value(r, "checkpoint.folder_name") == "iter_{step:07}");
  CHECK(Value(r, "checkpoint.steps_between_checkpoints") == "2");
  CHECK_THAT(r.Find("checkpoint.folder_name")->reason, Catch::Contains("zero-padded to 7 digits"));
}

TEST_CASE("fit, checkpoint folders: names that count the saves are {id}") {
  FolderSaves s;
  s.every = 2;
  s.resumed = "run3_ckpt_000";
  s.folder = [](int save, int) { return StrCat("run3_ckpt_00", save + 1); };
  const FitResult r = Fit(Build(s));
  CHECK(Value(r, "checkpoint.folder_name") == "run3_ckpt_{id:03}");
  CHECK_THAT(r.Find("checkpoint.folder_name")->reason,
             Catch::Contains("count the checkpoints one by one"));
}

TEST_CASE("fit, checkpoint folders: saves into one folder, or names no rule explains") {
  FolderSaves shared;
  shared.folder = [](int, int) { return std::string("weights"); };
  shared.tag = false;
  CHECK(Fit(Build(shared)).Find("checkpoint.folder_name") == nullptr);

  FolderSaves odd;
  odd.every = 2;
  odd.folder = [](int save, int) { return StrCat("ckpt", (save * 7) % 5); };  // 0, 2, 4, 1
  const FitResult r = Fit(Build(odd));
  CHECK_THAT(Value(r, "checkpoint.folder_name"), Catch::StartsWith("(not inferred: "));
  CHECK_THAT(Value(r, "checkpoint.folder_name"), Catch::Contains("ckpt0, ckpt2, ckpt4, ..."));
}

TEST_CASE("fit folder_name: a checkpoint-only trace names its folders by a period of steps") {
  // No data read, so no steps: the folders' numbers (8, 16, 24) are multiples of one period, a
  // save every 8 steps (before: checkpoint-only traces got no folder_name at all).
  ProfileTrace t;
  int64_t now = 1'000'000;
  for (int step : {8, 16, 24}) {
    const std::string model = StrCat("/job/ckpt/global_step", step, "/model.pt");
    AddEvent(&t, 1, 1, "open64", now, 2, model);
    AddEvent(&t, 1, 1, "pwrite", now + 3, 100, model, 0, 512 << 10, 512 << 10);
    AddEvent(&t, 1, 1, "pwrite", now + 110, 100, model, 512 << 10, 512 << 10, 512 << 10);
    now += 2'000'000;
  }
  const FitResult r = Fit(t);
  CHECK(Value(r, "workflow.train") == "false");
  CHECK(Value(r, "checkpoint.folder_name") == "global_step{step}");
  CHECK_THAT(r.Find("checkpoint.folder_name")->reason,
             Catch::Contains("named by their global step (a save every 8 steps)"));
}

TEST_CASE("fit checkpoints: stalls a period of writes apart do not cut one file's save in three") {
  // No data read, so no steps. Each save writes one file in 15 contiguous pieces, 100 us apart,
  // but for two 5 ms stalls after its 5th and 10th piece (a busy host), 2 s between saves: every
  // 5th gap is long, a period of 5 writes, yet a save never begins where a file's writes go on.
  ProfileTrace t;
  int64_t now = 1'000'000;
  for (int step : {6, 12, 18}) {
    const std::string file = StrCat("/job/ckpt/epoch=", step / 6 - 1, "-step=", step, ".ckpt");
    AddEvent(&t, 1, 1, "open64", now, 2, file);
    for (int k = 0; k < 15; ++k) {
      AddEvent(&t, 1, 1, "pwrite", now + 10, 50, file, k * 4096, 4096, 4096);
      now += (k == 4 || k == 9) ? 5'000 : 150;
    }
    now += 2'000'000;
  }
  const FitResult r = Fit(t);
  CHECK_THAT(r.Find("workflow.checkpoint")->reason, Catch::Contains("3 saves to 3 files"));
}

}  // namespace
}  // namespace dlio

namespace dlio {
namespace {

// One thread reads in 8 batches; after every 4th a save writes `file(save)` as h5py writes an
// HDF5 file of two small datasets in groups: the superblock, the data, the metadata and the
// superblock again at close.
ProfileTrace BuildH5pySaves(const std::function<std::string(int save)>& file) {
  ProfileTrace t;
  int64_t now = 1'000'000;
  int saves = 0;
  for (int b = 0; b < 8; ++b) {
    fit_test::AddBatchReads(&t, 1, b, &now);
    now += 20'000;
    if ((b + 1) % 4 != 0) continue;
    const std::string path = StrCat("/job/ckpt/", file(saves++));
    AddEvent(&t, 1, 1, "open", now, 2, path);
    const int64_t writes[][2] = {{0, 96},      {2432, 3456}, {7936, 128}, {96, 2336},
                                 {5888, 2048}, {0, 96},      {0, 96}};
    for (const auto& w : writes) {
      now += 10;
      AddEvent(&t, 1, 1, "pwrite", now, 5, path, w[0], w[1], w[1]);
    }
    now += 1'000;
  }
  return t;
}

TEST_CASE("fit, checkpoint folders: h5py rewriting one file every save is folder_name '.'") {
  const FitResult r = Fit(BuildH5pySaves([](int) { return "weights.h5"; }));
  CHECK(Value(r, "checkpoint.type") == "h5py_save");
  CHECK(Value(r, "checkpoint.h5py_file_name") == "weights.h5");
  CHECK(Value(r, "checkpoint.folder_name") == ".");
  CHECK_THAT(r.Find("checkpoint.folder_name")->reason,
             Catch::Contains("all 2 saves rewrite one file (weights.h5)"));
  CHECK_THAT(Value(r, "checkpoint.h5py_datasets"), Catch::Contains("layer_1/kernel:32:fp32"));
  auto config = ParseConfig(FitYaml(r, {"test"}), "fit.yaml");
  INFO(config.status().ToString());
  CHECK(config.ok());
  // A file per save in a folder of their own: a folder per save, as dlio's default.
  const FitResult apart =
      Fit(BuildH5pySaves([](int save) { return StrCat("epoch", save, "/weights.h5"); }));
  CHECK(Value(apart, "checkpoint.type") == "h5py_save");
  CHECK(Value(apart, "checkpoint.folder_name") != ".");
}

}  // namespace
}  // namespace dlio
