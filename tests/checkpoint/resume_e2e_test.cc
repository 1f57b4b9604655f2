// checkpoint.resume and checkpoint.tag_file, seen by strace: dataset generation writes the
// checkpoint to resume from, and the training run reads the tag, then opens that checkpoint's
// files for reading (torch.load's order: the files as named) before its first data file, then saves
// the next ones, rewriting the tag after each; with no checkpoint there, training starts fresh and
// reads none. With checkpoint.folder_name global_step{step}, DeepSpeed's folder names: the global
// step goes on from the resumed checkpoint's, and the next run resumes from the newest by step;
// with {epoch} the epochs go on after the resumed checkpoint's too.
#include <catch2/catch.hpp>
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.h"

namespace dlio {
namespace {

using testing::DlioRun;
using testing::ReadTextFile;
using testing::RunCommand;
using testing::StraceCommand;
using testing::TempDir;

struct Open {
  std::string path;
  bool writes = false;
};

std::vector<Open> Opens(const std::string& log) {
  static const std::regex kLine(R"re(^\d+\s+openat\(AT_FDCWD, "([^"]*)", ([A-Z_|]*))re");
  std::vector<Open> out;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, kLine)) {
      out.push_back({m[1], m[2].str().find("O_RDONLY") == std::string::npos});
    }
  }
  return out;
}

TEST_CASE("checkpoint.resume loads the newest checkpoint before training", "[checkpoint]") {
  if (std::system("strace -o /dev/null true >/dev/null 2>&1") != 0) {
    WARN("strace is missing or cannot trace here; skipped");
    return;
  }
  TempDir dir;
  const std::string ckpt = dir / "ckpt";
  const std::string args =
      " --quiet --set dataset.format=npy --set dataset.data_folder=" + dir / "data" +
      " --set dataset.num_files_train=4 --set dataset.num_samples_per_file=1"
      " --set dataset.record_length_bytes=4096 --set reader.batch_size=2 --set train.epochs=1"
      " --set workflow.checkpoint=true --set checkpoint.steps_between_checkpoints=1"
      " --set checkpoint.resume=true --set checkpoint.tag_file=latest"
      " --set checkpoint.checkpoint_folder=" +
      ckpt + " --set checkpoint.type=torch_save --set checkpoint.torch_modules=none" +
      " --set 'checkpoint.torch_file_name=model_states.pt, optim_states.pt'" +
      " --set 'checkpoint.torch_state_dict=w:64x32, b:64; 0:scalar, 1:64x32, 2:64x32'" +
      " --set 'checkpoint.torch_pickle_bytes=1500, 0' --set output.folder=" + dir / "out";
  auto gen = RunCommand(DlioRun() + args + " --no-train");
  INFO(gen.output);
  REQUIRE(gen.exit_code == 0);
  // Generation wrote the checkpoint to resume from: both files and the manifest.
  CHECK(std::filesystem::exists(ckpt + "/ckpt-000000/model_states.pt"));
  CHECK(std::filesystem::exists(ckpt + "/ckpt-000000/optim_states.pt"));
  CHECK(std::filesystem::exists(ckpt + "/ckpt-000000/.dlio-complete-rank0"));
  const std::string log = dir / "strace.log";
  const auto traced = [&](const std::string& extra) {
    auto run = RunCommand(StraceCommand("-f -qq -e trace=openat -o " + log + " " + DlioRun() +
                                        args + " --no-generate" + extra));
    INFO(run.output);
    REQUIRE(run.exit_code == 0);
    return Opens(ReadTextFile(log));
  };
  std::vector<std::string> ckpt_opens;  // "r <name>" or "w <name>", up to the first data file
  bool data_seen = false;
  for (const Open& o : traced("")) {
    if (o.path.rfind(dir / "data/", 0) == 0 && !data_seen) {
      data_seen = true;
      ckpt_opens.push_back("data");
    }
    if (o.path.rfind(ckpt + "/", 0) == 0 &&
        (o.path.find(".pt") != std::string::npos || o.path == ckpt + "/latest")) {
      ckpt_opens.push_back((o.writes ? "w " : "r ") + o.path.substr(ckpt.size() + 1));
    }
  }
  // The tag, then the files it names (torch.load's order), before the data; then two steps, one
  // save each, to the next ids, the tag rewritten after each.
  const std::vector<std::string> expected{
      "r latest", "r ckpt-000000/model_states.pt", "r ckpt-000000/optim_states.pt",
      "data",     "w ckpt-000001/model_states.pt", "w ckpt-000001/optim_states.pt",
      "w latest", "w ckpt-000002/model_states.pt", "w ckpt-000002/optim_states.pt",
      "w latest"};
  std::vector<std::string> reads_merged;  // one entry per run of opens of the same file
  for (const std::string& s : ckpt_opens) {
    if (reads_merged.empty() || reads_merged.back() != s) reads_merged.push_back(s);
  }
  CHECK(reads_merged == expected);
  CHECK(ReadTextFile(ckpt + "/latest") == "ckpt-000002");

  // No checkpoint there: a fresh start, nothing read from the folder.
  std::filesystem::remove_all(ckpt);
  for (const Open& o : traced("")) {
    if (o.path.rfind(ckpt + "/", 0) == 0 && o.path.find(".pt") != std::string::npos) {
      CAPTURE(o.path);
      CHECK(o.writes);
    }
  }
  CHECK(std::filesystem::exists(ckpt + "/ckpt-000000/optim_states.pt"));
  CHECK(std::filesystem::exists(ckpt + "/ckpt-000001/optim_states.pt"));
}

// dlio-run over 8 samples of one file each, batch 1 (8 steps an epoch), a model checkpoint of
// 4096 bytes every 4 steps into `ckpt`, resumed from the newest there; `extra` adds settings.
// REQUIREs a zero exit.
void RunResumed(const TempDir& dir, const std::string& ckpt, const std::string& extra) {
  const std::string args =
      " --quiet --set dataset.format=npy --set dataset.data_folder=" + dir / "data" +
      " --set dataset.num_files_train=8 --set dataset.num_samples_per_file=1"
      " --set dataset.record_length_bytes=4096 --set reader.batch_size=1"
      " --set workflow.checkpoint=true --set checkpoint.steps_between_checkpoints=4"
      " --set checkpoint.resume=true --set checkpoint.type=model"
      " --set checkpoint.model_size_bytes=4096 --set checkpoint.checkpoint_folder=" +
      ckpt + " --set output.folder=" + dir / "out";
  auto r = RunCommand(DlioRun() + args + extra);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
}

TEST_CASE("checkpoint.folder_name: global_step folders go on from the resumed step",
          "[checkpoint]") {
  TempDir dir;
  const std::string ckpt = dir / "ckpt";
  const auto run = [&](const std::string& extra) {
    RunResumed(dir, ckpt,
               " --set train.epochs=1 --set checkpoint.tag_file=latest"
               " --set 'checkpoint.folder_name=global_step{step}'" +
                   extra);
  };
  // Generation writes the checkpoint an earlier run would have: after the first 4 steps.
  run(" --no-train");
  CHECK(std::filesystem::exists(ckpt + "/global_step4/model-rank0.bin"));
  CHECK(ReadTextFile(ckpt + "/latest") == "global_step4");
  // 8 steps resumed at step 4: saves after global steps 8 and 12.
  run(" --no-generate");
  CHECK(std::filesystem::exists(ckpt + "/global_step8/model-rank0.bin"));
  CHECK(std::filesystem::exists(ckpt + "/global_step12/model-rank0.bin"));
  CHECK(ReadTextFile(ckpt + "/latest") == "global_step12");
  // The newest is global_step12 by its step (by name, global_step8 sorts last; resuming there
  // would save to global_step12 again and be refused).
  run(" --no-generate");
  CHECK(std::filesystem::exists(ckpt + "/global_step16/model-rank0.bin"));
  CHECK(std::filesystem::exists(ckpt + "/global_step20/model-rank0.bin"));
  CHECK(ReadTextFile(ckpt + "/latest") == "global_step20");
  CHECK_FALSE(std::filesystem::exists(ckpt + "/ckpt-000000"));
}

TEST_CASE("checkpoint.folder_name: {epoch} goes on after the resumed checkpoint's epoch",
          "[checkpoint]") {
  TempDir dir;
  const std::string ckpt = dir / "ckpt";
  // 8 steps an epoch, 2 epochs, a save every 4 steps.
  const auto run = [&](const std::string& extra) {
    RunResumed(
        dir, ckpt,
        " --set train.epochs=2 --set 'checkpoint.folder_name=epoch{epoch}-step{step}'" + extra);
  };
  const auto saved = [&](const std::string& folder) {
    return std::filesystem::exists(ckpt + "/" + folder + "/model-rank0.bin");
  };
  // Generation: the checkpoint after the first 4 steps of epoch 0.
  run(" --no-train");
  CHECK(saved("epoch0-step4"));
  // Resumed there: the run's 2 epochs are epochs 1 and 2, its saves global steps 8 to 20.
  run(" --no-generate");
  for (const char* folder : {"epoch1-step8", "epoch1-step12", "epoch2-step16", "epoch2-step20"}) {
    CAPTURE(folder);
    CHECK(saved(folder));
  }
  // Resumed from the newest (epoch2-step20): epochs 3 and 4.
  run(" --no-generate");
  for (const char* folder : {"epoch3-step24", "epoch3-step28", "epoch4-step32", "epoch4-step36"}) {
    CAPTURE(folder);
    CHECK(saved(folder));
  }
  CHECK_FALSE(saved("epoch0-step8"));
}

}  // namespace
}  // namespace dlio
