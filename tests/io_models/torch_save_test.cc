// checkpoint.type torch_save: the file dlio writes for a state dict is the one torch.save writes
// (the same write requests, row by row, a byte-identical data.pkl, and torch.load reads it),
// for several state dicts: one that fits the ofstream buffer, a CNN with BatchNorm (version 2
// modules and an int64 buffer), more than ten tensors (keys sorted as strings), fp16, and a
// plain OrderedDict without _metadata. And `dlio-run fit` of torch's writes (the file gone, or
// read back) describes a state dict with those requests.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "checkpoint/torch_save_options.h"
#include "dlio/checkpointer.h"
#include "dlio/clock.h"
#include "dlio/profile_fit.h"
#include "dlio/registries.h"
#include "dlio/storage.h"
#include "format/torch/torch_save_file.h"
#include "request_log.h"
#include "test_util.h"

namespace dlio {
namespace {

using io_model_test::KindFilter;
using io_model_test::Request;
using io_model_test::RequestsOf;
using io_model_test::ToString;
using io_model_test::TracePythonProgram;
using testing::TempDir;

constexpr int kSkipped = 77;  // the ctest SKIP_RETURN_CODE of this executable

const KindFilter kWrites{{OpKind::kWrite}};

// Saves each state dict with torch.save under the interposer and prints, per file, the
// checkpoint.torch_state_dict and checkpoint.torch_modules values that describe it.
constexpr char kSaveScript[] = R"(
import collections, sys, torch
from torch import nn
d = sys.argv[1]
torch.manual_seed(0)
cases = {
    'mlp.pt': nn.Sequential(nn.Linear(10, 7), nn.ReLU(), nn.Linear(7, 3)).state_dict(),
    'cnn.pt': nn.Sequential(nn.Conv2d(3, 16, 3), nn.BatchNorm2d(16), nn.ReLU(),
                            nn.Conv2d(16, 8, 3), nn.Flatten(), nn.Linear(8 * 4 * 4, 10)).state_dict(),
    'deep.model.pt': nn.Sequential(*[nn.Linear(300, 300) for _ in range(6)]).state_dict(),
    'half.pt': nn.Sequential(nn.Linear(200, 100), nn.Linear(100, 4)).half().state_dict(),
    'plain.pt': collections.OrderedDict(w=torch.zeros(64, 33), b=torch.ones(5), step=torch.tensor(7)),
}
names = {torch.float32: 'fp32', torch.float16: 'fp16', torch.int64: 'int64', torch.float64: 'fp64'}
for f, sd in cases.items():
    torch.save(sd, d + '/' + f)
    tensors = ', '.join(k + ':' + 'x'.join(map(str, v.shape)) + ':' + names[v.dtype]
                        for k, v in sd.items())
    meta = getattr(sd, '_metadata', None)
    modules = 'none' if meta is None else ', '.join(
        k + '=' + str(v['version']) for k, v in meta.items() if k != '')
    print(f + '|' + tensors + '|' + modules)
)";

// Loads dlio's file with torch.load and compares it with torch's: the same keys, shapes,
// dtypes, and the same data.pkl.
constexpr char kLoadScript[] = R"(
import sys, torch, zipfile
def check(theirs, ours):
    a, b = torch.load(theirs), torch.load(ours)
    assert list(a.keys()) == list(b.keys()), (list(a.keys()), list(b.keys()))
    for k in a:
        assert a[k].shape == b[k].shape and a[k].dtype == b[k].dtype, k
    assert getattr(a, '_metadata', None) == getattr(b, '_metadata', None)
    za, zb = zipfile.ZipFile(theirs), zipfile.ZipFile(ours)
    assert za.namelist() == zb.namelist(), (za.namelist(), zb.namelist())
    assert za.read(za.namelist()[0]) == zb.read(zb.namelist()[0]), ours + ': data.pkl differs'
for theirs, ours in zip(sys.argv[1::2], sys.argv[2::2]):
    check(theirs, ours)
print('ok')
)";

std::string Quoted(const std::string& s) {
  std::string q = "'";
  q += s;
  q += "'";
  return q;
}

struct Case {
  std::string file, tensors, modules;
};

std::vector<Case> ParseCases(const std::string& output) {
  std::vector<Case> cases;
  std::istringstream in(output);
  std::string line;
  while (std::getline(in, line)) {
    const size_t a = line.find('|');
    const size_t b = line.find('|', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    cases.push_back({line.substr(0, a), line.substr(a + 1, b - a - 1), line.substr(b + 1)});
  }
  return cases;
}

TEST_CASE("torch_save checkpoints: torch.save's file and write requests") {
  // find_spec, not an import: importing torch costs seconds.
  if (testing::RunCommand(Quoted(testing::SystemPython()) +
                          " -c 'import importlib.util, sys; "
                          "sys.exit(importlib.util.find_spec(\"torch\") is None)'")
          .exit_code != 0) {
    std::fprintf(stderr, "SKIPPED: %s cannot import torch (Debian package python3-torch)\n",
                 testing::SystemPython().c_str());
    std::exit(kSkipped);
  }
  TempDir tmp;
  const std::string theirs = tmp / "torch";
  const std::string ours = tmp / "dlio";
  std::filesystem::create_directories(theirs);
  std::filesystem::create_directories(ours);
  const std::string save = tmp / "save.py";
  testing::WriteTextFile(save, kSaveScript);
  const std::string load = tmp / "load.py";
  testing::WriteTextFile(load, kLoadScript);
  const std::string out = tmp / "cases.txt";
  const ProfileTrace trace = TracePythonProgram(
      Quoted(save) + " " + Quoted(theirs) + " > " + Quoted(out), theirs, tmp / "prof");
  const std::vector<Case> cases = ParseCases(testing::ReadTextFile(out));
  REQUIRE(cases.size() == 5);
  const std::vector<Request> torch_writes = RequestsOf(trace, theirs, kWrites);

  MemoryTracer tracer;
  auto storage = NewPosixStorage({});
  storage->Bind(SystemClock(), &tracer);
  std::string load_args = Quoted(testing::SystemPython()) + ' ' + Quoted(load);
  for (const Case& c : cases) {
    INFO(c.file << ": " << c.tensors << " | " << c.modules);
    auto sd = torch_save::ParseTorchStateDict(c.tensors, c.modules);
    REQUIRE(sd.ok());
    const std::string path = ours + "/" + c.file;
    auto file = storage->Open(path, OpenMode::kCreateNew);
    REQUIRE(file.ok());
    const Status st = torch_save::WriteTorchSave(file->get(), torch_save::TorchArchiveName(c.file),
                                                 *sd, [](uint64_t offset, size_t n, char* dst) {
                                                   for (size_t k = 0; k < n; ++k)
                                                     dst[k] = static_cast<char>((offset + k) * 7);
                                                 });
    INFO(st.ToString());
    REQUIRE(st.ok());
    REQUIRE((*file)->Close().ok());
    CHECK(std::filesystem::file_size(path) ==
          torch_save::TorchSaveFileSize(torch_save::TorchArchiveName(c.file), *sd));
    CHECK(std::filesystem::file_size(path) == std::filesystem::file_size(theirs + "/" + c.file));
    load_args += ' ' + Quoted(theirs + "/" + c.file) + ' ' + Quoted(path);
  }
  // torch.load reads every file dlio wrote, as torch's (one Python run for all).
  const auto loaded = testing::RunCommand(load_args);
  INFO(loaded.output);
  CHECK(loaded.exit_code == 0);
  const std::vector<Request> dlio_writes = RequestsOf(tracer, ours, kWrites);
  INFO("torch.save:\n" << ToString(torch_writes) << "dlio:\n" << ToString(dlio_writes));
  CHECK(dlio_writes == torch_writes);
  CHECK(torch_writes.size() > cases.size());  // not one write per file: the test can fail

  // dlio-run fit of each file's trace, from its writes alone and reading the file back: a state
  // dict whose torch_save requests are torch.save's (and read back: torch's state dict).
  for (const Case& c : cases) {
    INFO(c.file);
    const ProfileTrace one = io_model_test::EventsOfFile(trace, theirs, c.file);
    std::vector<Request> want;
    for (const Request& r : torch_writes) {
      if (r.file == c.file) want.push_back(r);
    }
    for (const bool read : {false, true}) {
      INFO((read ? "read back" : "writes alone"));
      FitOptions options;
      if (read) options.read_file = io_model_test::ReadThrough(storage.get());
      auto fitted = FitTrace(one, options);
      INFO(fitted.status().ToString());
      REQUIRE(fitted.ok());
      INFO(FitYaml(*fitted, {c.file}));
      const FitEntry* type = fitted->Find("checkpoint.type");
      REQUIRE(type != nullptr);
      // cnn.pt's small BatchNorm tensors share writevs with large ones: their number comes from
      // the central directory's size, so from the writes alone too.
      REQUIRE(type->value == "torch_save");
      std::string modules = fitted->Find("checkpoint.torch_modules")->value;
      if (modules == "\"\"") modules.clear();
      auto sd = torch_save::ParseTorchStateDict(fitted->Find("checkpoint.torch_state_dict")->value,
                                                modules);
      REQUIRE(sd.ok());
      const std::string name = fitted->Find("checkpoint.torch_file_name")->value;
      auto requests = torch_save::TorchSaveRequests(torch_save::TorchArchiveName(name), *sd);
      REQUIRE(requests.ok());
      std::vector<Request> got;
      for (const auto& w : *requests) {
        got.push_back(
            {c.file, OpKind::kWrite, static_cast<int64_t>(w.offset), static_cast<int64_t>(w.size)});
      }
      CHECK(got == want);
      if (read) {
        CHECK(
            torch_save::TorchPickle(*sd) ==
            torch_save::TorchPickle(torch_save::ParseTorchStateDict(c.tensors, c.modules).value()));
      }
    }
  }
}

TEST_CASE("torch_save checkpointer: a save torch.load reads, read back, sizes") {
  TempDir tmp;
  MemoryTracer tracer;
  auto storage = NewPosixStorage({});
  storage->Bind(SystemClock(), &tracer);
  Registries registries;
  REQUIRE(RegisterBuiltinCheckpointers(&registries.checkpointers).ok());
  CheckpointOptions options;
  options.name = "torch_save";
  options.folder = tmp / "ckpt";
  options.read_back = true;
  options.sections.Get<TorchSaveOptions>().state_dict =
      "body.0.weight:64x32, body.0.bias:64, head.weight:10x64:fp16, step:";
  CheckpointEnv env;
  env.storage = storage.get();
  env.clock = SystemClock();
  auto made = (*registries.checkpointers.Get("torch_save"))(options, env);
  INFO(made.status().ToString());
  REQUIRE(made.ok());
  auto saved = (*made)->Save(0, 10);
  INFO(saved.status().ToString());
  REQUIRE(saved.ok());
  REQUIRE(saved->files.size() == 1);
  const std::string path = saved->files[0].path;
  CHECK(path == options.folder + "/ckpt-000000/model-rank0.pt");
  auto sd =
      torch_save::ParseTorchStateDict(options.sections.Get<TorchSaveOptions>().state_dict, "");
  REQUIRE(sd.ok());
  const uint64_t size = torch_save::TorchSaveFileSize("model-rank0", *sd);
  CHECK(saved->files[0].bytes == size);
  CHECK(std::filesystem::file_size(path) == size);
  CHECK(saved->bytes_read == size);
  // The writes are torch.save's (first test), and as torch.save dlio writes model-rank0.pt in
  // place: every write goes to the final name and nothing is renamed.
  for (const TraceEvent& e : tracer.Events()) {
    CHECK(std::string(e.name) != "rename");
    if (std::string(e.name).find("write") != std::string::npos)
      CHECK(tracer.FileName(e.file_id) == path);
  }
  uint64_t written = 0;
  for (const Request& r : RequestsOf(tracer, options.folder, kWrites)) {
    CHECK(r.offset == static_cast<int64_t>(written));
    written += static_cast<uint64_t>(r.size);
  }
  CHECK(written == size);
  auto loaded = (*made)->Load(0);
  INFO(loaded.status().ToString());
  CHECK(loaded.ok());
  const std::string script = tmp / "check.py";
  testing::WriteTextFile(script,
                         "import sys\n"
                         "try:\n"
                         "    import torch\n"
                         "except ImportError:\n"
                         "    sys.exit(3)\n"
                         "sd = torch.load(sys.argv[1])\n"
                         "assert list(sd) == ['body.0.weight', 'body.0.bias', 'head.weight', "
                         "'step'], list(sd)\n"
                         "assert sd['head.weight'].dtype == torch.float16\n"
                         "assert sd['step'].shape == ()\n"
                         "assert list(sd._metadata) == ['', 'body', 'body.0', 'head'], "
                         "sd._metadata\n");
  const auto run = testing::RunCommand(Quoted(testing::SystemPython()) + ' ' + Quoted(script) +
                                       ' ' + Quoted(path));
  INFO(run.output);
  if (run.exit_code == 3) return;  // no torch: the rest of the test has run
  CHECK(run.exit_code == 0);
}

TEST_CASE("torch_save checkpointer: saves keep the tensors' memory, as a training process does") {
  // Freeing a 2 MiB staging buffer after each save raised glibc's mmap threshold, so the numpy
  // model's later 256 KiB reads stopped landing in fresh pages as Python's do (docs/io_models.md).
  TempDir tmp;
  const size_t probe = size_t{1} << 20;
  if (testing::MallocMapsInChild(probe, [] {}) != 1) {
    WARN("malloc(1 MiB) is not mmapped in a fresh child here; nothing to compare");
    return;
  }
  const int after = testing::MallocMapsInChild(probe, [&] {
    auto storage = NewPosixStorage({});
    Registries registries;
    if (!RegisterBuiltinCheckpointers(&registries.checkpointers).ok()) ::_exit(3);
    CheckpointOptions options;
    options.name = "torch_save";
    options.folder = tmp / "ckpt";
    options.sections.Get<TorchSaveOptions>().state_dict = "big.weight:1024x512, big.bias:512";
    CheckpointEnv env;
    env.storage = storage.get();
    env.clock = SystemClock();
    auto made = (*registries.checkpointers.Get("torch_save"))(options, env);
    if (!made.ok() || !(*made)->Save(0, 1).ok() || !(*made)->Save(1, 2).ok()) ::_exit(3);
    // The probe runs while the checkpointer lives, as the next steps of a run do.
    (void)made->release();
    (void)storage.release();
  });
  CHECK(after == 1);
}

TEST_CASE("torch_save checkpointer: a bad state dict is refused, naming the key") {
  using torch_save::ParseTorchStateDict;
  for (const char* bad : {"", "w", "w:3y4", "w:3:float8", "w:3, w:4"}) {
    INFO(bad);
    const auto parsed = ParseTorchStateDict(bad, "");
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.status().ToString().find("checkpoint.torch_state_dict") != std::string::npos);
  }
  const auto modules = ParseTorchStateDict("w:3", "a=x");
  REQUIRE_FALSE(modules.ok());
  CHECK(modules.status().ToString().find("checkpoint.torch_modules") != std::string::npos);
  CHECK_FALSE(ParseTorchStateDict("w:3", "none")->metadata);
  CHECK(ParseTorchStateDict("w:3", "a, b=2")->modules.size() == 3);
}

}  // namespace
}  // namespace dlio

namespace dlio {
namespace {

// checkpoint.torch_file_name: the file's name (its stem is the archive folder, so the headers
// follow it); refused when it is no plain name, or when all ranks would write one file.
TEST_CASE("torch_save checkpointer: checkpoint.torch_file_name names the file and its archive") {
  TempDir tmp;
  auto storage = NewPosixStorage({});
  storage->Bind(SystemClock(), nullptr);
  Registries registries;
  REQUIRE(RegisterBuiltinCheckpointers(&registries.checkpointers).ok());
  CheckpointOptions options;
  options.name = "torch_save";
  options.folder = tmp / "ckpt";
  options.sections.Get<TorchSaveOptions>().state_dict = "w:300, b:3";
  options.sections.Get<TorchSaveOptions>().file_name = "model-16.pt";
  CheckpointEnv env;
  env.storage = storage.get();
  env.clock = SystemClock();
  auto make = registries.checkpointers.Get("torch_save");
  REQUIRE(make.ok());
  auto made = (*make)(options, env);
  INFO(made.status().ToString());
  REQUIRE(made.ok());
  auto saved = (*made)->Save(0, 10);
  REQUIRE(saved.ok());
  REQUIRE(saved->files.size() == 1);
  CHECK(saved->files[0].path == options.folder + "/ckpt-000000/model-16.pt");
  auto sd =
      torch_save::ParseTorchStateDict(options.sections.Get<TorchSaveOptions>().state_dict, "");
  REQUIRE(sd.ok());
  CHECK(saved->files[0].bytes == torch_save::TorchSaveFileSize("model-16", *sd));
  CHECK(torch_save::TorchSaveFileSize("model-16", *sd) !=
        torch_save::TorchSaveFileSize("model-rank0", *sd));

  options.world = 2;
  options.rank = 1;
  auto shared = (*make)(options, env);
  REQUIRE_FALSE(shared.ok());
  CHECK(shared.status().ToString().find("checkpoint.torch_file_name") != std::string::npos);
  options.sections.Get<TorchSaveOptions>().file_name = "m{rank}.pt";
  CHECK((*make)(options, env).ok());
  for (const char* bad : {"a/b.pt", "..", ".dlio-complete-rank0"}) {
    options.sections.Get<TorchSaveOptions>().file_name = bad;
    auto refused = (*make)(options, env);
    INFO(bad);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.status().ToString().find("checkpoint.torch_file_name") != std::string::npos);
  }
}

}  // namespace
}  // namespace dlio
