// How dlio-run's files reach the kernel, seen by strace: emulated checkpoints and the side_io
// model file are written in place under their final names, as torch.save and DLIO write theirs
// (one open with the final name, no temporary, no rename); dlio's own outputs (summary.json) still
// go through a temporary name and a rename.
#include <catch2/catch.hpp>
#include <cstdlib>
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

struct Call {
  std::string name;  // open, openat, rename, renameat, renameat2, creat
  std::string path;  // the first path argument
  std::string rest;  // the flags, the second path, the return value
};

// The file calls of an `strace -f -o log` log, resumed lines joined by strace itself (-qq).
std::vector<Call> Calls(const std::string& log) {
  static const std::regex kLine(
      R"(^\d+\s+(open|openat|creat|rename|renameat|renameat2)\((?:AT_FDCWD, )?"([^"]*)\"(.*)$)");
  std::vector<Call> calls;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, kLine)) calls.push_back({m[1], m[2], m[3]});
  }
  return calls;
}

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST_CASE("checkpoints and the side_io file are written in place, summary.json via a rename",
          "[checkpoint]") {
  if (std::system("strace -o /dev/null true >/dev/null 2>&1") != 0) {
    WARN("strace is missing or cannot trace here; skipped");
    return;
  }
  TempDir dir;
  const std::string args =
      " --quiet --set dataset.format=npy --set dataset.data_folder=" + dir / "data" +
      " --set dataset.num_files_train=2 --set dataset.num_samples_per_file=2"
      " --set dataset.record_length_bytes=4096 --set reader.batch_size=2 --set train.epochs=2"
      " --set workflow.checkpoint=true --set checkpoint.checkpoint_after_epoch=1"
      " --set checkpoint.checkpoint_folder=" +
      dir / "ckpt" + " --set checkpoint.type=torch_save" +
      " --set 'checkpoint.torch_state_dict=fc.weight:64x32, fc.bias:64'" +
      " --set side_io.write_bytes=10000 --set output.folder=" + dir / "out";
  auto gen = RunCommand(DlioRun() + args + " --no-train");
  INFO(gen.output);
  REQUIRE(gen.exit_code == 0);
  const std::string log = dir / "strace.log";
  auto run =
      RunCommand(StraceCommand("-f -qq -e trace=open,openat,creat,rename,renameat,renameat2 -o " +
                               log + " " + DlioRun() + args + " --no-generate"));
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  const std::vector<Call> calls = Calls(ReadTextFile(log));
  REQUIRE(!calls.empty());

  const std::string ckpt = dir / "ckpt/";
  const std::string side = dir / "out/side_io-0.bin";
  std::vector<std::string> ckpt_opens;
  int side_opens = 0, summary_tmp_opens = 0, summary_renames = 0;
  for (const auto& c : calls) {
    CAPTURE(c.name, c.path, c.rest);
    const bool is_rename = c.name.rfind("rename", 0) == 0;
    if (Contains(c.path, ckpt)) {
      CHECK_FALSE(is_rename);                 // no rename of anything in the checkpoint folder
      CHECK_FALSE(Contains(c.path, ".tmp"));  // and no temporary name in it
      if (!is_rename && Contains(c.rest, "O_CREAT")) ckpt_opens.push_back(c.path);
    }
    if (Contains(c.path, side)) {
      CHECK_FALSE(is_rename);
      CHECK(c.path == side);  // the final name, opened once with truncation
      CHECK(Contains(c.rest, "O_TRUNC"));
      ++side_opens;
    }
    if (Contains(c.path, dir / "out/summary.json.tmp-")) {
      if (is_rename) {
        CHECK(Contains(c.rest, dir / "out/summary.json\""));
        ++summary_renames;
      } else {
        ++summary_tmp_opens;
      }
    }
  }
  // Two epochs, one save each: the torch.save file and the manifest, created by one open each
  // under their final names.
  CHECK(ckpt_opens == std::vector<std::string>{
                          dir / "ckpt/ckpt-000000/model-rank0.pt",
                          dir / "ckpt/ckpt-000000/.dlio-complete-rank0",
                          dir / "ckpt/ckpt-000001/model-rank0.pt",
                          dir / "ckpt/ckpt-000001/.dlio-complete-rank0",
                      });
  CHECK(side_opens == 1);
  CHECK(summary_tmp_opens == 1);  // dlio's own output keeps the temporary name ...
  CHECK(summary_renames == 1);    // ... and the rename over summary.json
}

}  // namespace
}  // namespace dlio
