// checkpoint.type torch_save read back as torch.load reads it: the real torch.load (Debian's
// python3 and torch 1.13) runs under strace on files dlio's torch_save checkpointer wrote, and
// the checkpointer's read-back (checkpoint.read_back) must issue the same read requests, file,
// offset and size, in the same order and number; so must the request model computed from the
// layout alone (pyio::TorchLoadRequests of TorchSaveLayout). State dicts: one tensor under 4 KiB
// of file, tensors over 1 MiB, 40 small tensors (load order is not file order past ten), fp16,
// and an empty tensor (no record read). Skipped (77) without strace, ptrace or torch.
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "checkpoint/torch_save_options.h"
#include "dlio/checkpointer.h"
#include "dlio/clock.h"
#include "dlio/profile_analysis.h"
#include "dlio/registries.h"
#include "dlio/storage.h"
#include "format/torch/torch_save_file.h"
#include "io_models/pyio/buffered_reader.h"
#include "io_models/pyio/torch_stream_reader.h"
#include "request_log.h"
#include "test_util.h"

namespace dlio {
namespace {

// The block size Python's open() would see for `path` (through an open, as the models take it).
uint64_t BlockSizeOf(Storage* storage, const std::string& path) {
  auto file = storage->Open(path, OpenMode::kRead);
  REQUIRE(file.ok());
  return pyio::HostBlockSize(storage, **file);
}

using io_model_test::Request;
using io_model_test::RequestsOf;
using io_model_test::ToString;
using testing::TempDir;

constexpr int kSkipped = 77;  // the ctest SKIP_RETURN_CODE of this executable

std::string Quoted(const std::string& s) { return "'" + s + "'"; }

void SkipUnlessAvailable() {
  const std::string python = Quoted(testing::SystemPython());
  const char* missing = nullptr;
  if (testing::RunCommand("strace -f -o /dev/null true").exit_code != 0) {
    missing = "strace (or ptrace permission)";
  } else if (testing::RunCommand(python + " -c 'import importlib.util, sys; "
                                          "sys.exit(importlib.util.find_spec(\"torch\") is None)'")
                 .exit_code != 0) {
    missing = "torch (Debian package python3-torch)";
  }
  if (missing == nullptr) return;
  std::fprintf(stderr, "SKIPPED: torch.load under strace needs %s\n", missing);
  std::exit(kSkipped);
}

struct Case {
  std::string name, state_dict;
};

std::string ManySmall() {
  std::string s;
  for (int i = 0; i < 40; ++i)
    s += (i ? ", l" : "l") + std::to_string(i) + ".w:" + std::to_string(i + 1);
  return s;
}

// The requests the model computes for `file` from the layout alone.
std::vector<Request> ModelRequests(const std::string& file, const std::string& archive,
                                   const std::string& state_dict, size_t buffer) {
  auto sd = torch_save::ParseTorchStateDict(state_dict, "");
  REQUIRE(sd.ok());
  auto reads = pyio::TorchLoadRequests(torch_save::TorchSaveLayout(archive, *sd), buffer);
  REQUIRE(reads.ok());
  std::vector<Request> out;
  for (const auto& [offset, size] : *reads) {
    out.push_back({file, OpKind::kRead, static_cast<int64_t>(offset), static_cast<int64_t>(size)});
  }
  return out;
}

TEST_CASE("torch_save read-back: torch.load's requests under strace") {
  SkipUnlessAvailable();
  TempDir tmp;
  const std::vector<Case> cases = {
      {"tiny", "w:3"},         {"big", "a:512x1024, b:300000, c:10"},
      {"many", ManySmall()},   {"half", "h:1000x700:fp16, g:5:fp16"},
      {"empty", "e:0x4, w:5"},
  };
  const std::string data = tmp / "ckpt";  // the files compared (the script lies outside)
  MemoryTracer tracer;
  auto storage = NewPosixStorage({});
  storage->Bind(SystemClock(), &tracer);
  Registries registries;
  REQUIRE(RegisterBuiltinCheckpointers(&registries.checkpointers).ok());
  std::vector<std::string> paths;
  std::string load_args;
  for (const Case& c : cases) {
    CheckpointOptions options;
    options.name = "torch_save";
    options.folder = data + "/" + c.name;
    options.read_back = true;
    options.sections.Get<TorchSaveOptions>().state_dict = c.state_dict;
    options.sections.Get<TorchSaveOptions>().file_name = c.name + ".pt";
    CheckpointEnv env;
    env.storage = storage.get();
    env.clock = SystemClock();
    auto made = (*registries.checkpointers.Get("torch_save"))(options, env);
    INFO(c.name << ": " << made.status().ToString());
    REQUIRE(made.ok());
    auto saved = (*made)->Save(0, 1);
    INFO(saved.status().ToString());
    REQUIRE(saved.ok());
    paths.push_back(saved->files.at(0).path);
    load_args += ' ' + Quoted(paths.back());
  }
  const std::string log = tmp / "strace.log";
  const std::string script = tmp / "load.py";
  testing::WriteTextFile(script, "import sys, torch\nfor p in sys.argv[1:]:\n    torch.load(p)\n");
  const std::string cmd = "strace -f -ttt -T -e trace=openat,read,pread64,lseek,close -o " +
                          Quoted(log) + ' ' + Quoted(testing::SystemPython()) + ' ' +
                          Quoted(script) + load_args;
  const auto run = testing::RunCommand(cmd);
  INFO(cmd << "\n" << run.output);
  REQUIRE(run.exit_code == 0);
  ProfileTrace trace;
  const auto imported = ImportTrace(log, &trace);
  INFO(imported.status().ToString());
  REQUIRE(imported.ok());
  const std::vector<Request> torch_reads = RequestsOf(trace, data);
  const std::vector<Request> dlio_reads = RequestsOf(tracer, data);
  INFO("torch.load:\n" << ToString(torch_reads) << "dlio read-back:\n" << ToString(dlio_reads));
  CHECK(dlio_reads == torch_reads);

  // Per file, the model from the layout alone; and reads that are not transfer_size pieces.
  const size_t buffer = pyio::PythonBufferSize(BlockSizeOf(storage.get(), paths[0]));
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string file = io_model_test::RelativeTo(paths[i], data);
    std::vector<Request> want;
    for (const Request& r : torch_reads) {
      if (r.file == file) want.push_back(r);
    }
    INFO(file);
    CHECK(want.size() >= 8);  // the directory's reads alone are 7
    CHECK(ModelRequests(file, cases[i].name, cases[i].state_dict, buffer) == want);
  }
}

}  // namespace
}  // namespace dlio
