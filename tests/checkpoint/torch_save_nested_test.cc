// checkpoint.type torch_save for nested containers (torch.save({'module': ..., 'optimizer': ...})
// and DeepSpeed's two files per checkpoint): the write requests, hand-computed from the zip's
// layout and checked against strace of PyTorch 1.13 saving the same objects
// (tests/fidelity/programs/deepspeed_save_resume.py; docs/workloads.md, "torch.save checkpoints").
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "checkpoint/checkpointer_test_util.h"
#include "checkpoint/torch_load.h"
#include "checkpoint/torch_save_options.h"
#include "checkpoint/torch_save_plan.h"
#include "dlio/checkpointer.h"
#include "dlio/clock.h"
#include "dlio/registries.h"
#include "dlio/storage.h"
#include "dlio/storage_wrapper.h"
#include "format/torch/torch_save_file.h"
#include "test_util.h"

namespace dlio {
namespace {

using torch_save::TorchWrite;

std::string Quoted(const std::string& s) { return "'" + s + "'"; }

// Records every write request (file, offset, size).
class RecordingStorage final : public StorageWrapper {
 public:
  struct Write {
    std::string path;
    TorchWrite request;
  };
  explicit RecordingStorage(std::unique_ptr<Storage> inner)
      : StorageWrapper("recording", std::move(inner)) {
    this->inner()->Bind(SystemClock(), nullptr);
    Bind(SystemClock(), nullptr);
  }
  std::vector<Write> writes;

  std::vector<TorchWrite> Of(const std::string& suffix) const {
    std::vector<TorchWrite> out;
    for (const Write& w : writes) {
      if (w.path.size() >= suffix.size() &&
          w.path.compare(w.path.size() - suffix.size(), suffix.size(), suffix) == 0) {
        out.push_back(w.request);
      }
    }
    return out;
  }

 protected:
  Result<std::unique_ptr<File>> DoOpen(const std::string& path, OpenMode mode,
                                       const FileOptions& options) override {
    DLIO_ASSIGN_OR_RETURN(auto file, StorageWrapper::DoOpen(path, mode, options));
    return std::unique_ptr<File>(std::make_unique<RecordingFile>(std::move(file), this));
  }

 private:
  class RecordingFile final : public FileWrapper {
   public:
    RecordingFile(std::unique_ptr<File> inner, RecordingStorage* owner)
        : FileWrapper(std::move(inner)), owner_(owner) {}

   protected:
    Status DoWriteAt(uint64_t offset, const void* buf, size_t n) override {
      owner_->writes.push_back({path(), {offset, n}});
      return FileWrapper::DoWriteAt(offset, buf, n);
    }

   private:
    RecordingStorage* owner_;
  };
};

// The torch_save checkpointer of `options` over `storage`, or its error.
Result<std::unique_ptr<Checkpointer>> MakeTorchSave(CheckpointOptions options, Storage* storage) {
  options.name = "torch_save";
  return checkpoint_test::Build(options, storage);
}

// torch.nn.Linear(16, 64) after one Adam step, saved as {'module': model.state_dict(),
// 'optimizer': opt.state_dict(), 'global_steps': 1}: the storages in the order the pickler meets
// them (the module's weight and bias, then per parameter Adam's step, exp_avg, exp_avg_sq).
constexpr char kNested[] =
    "module.weight:64x16, module.bias:64, optimizer.state.0.step:scalar, "
    "optimizer.state.0.exp_avg:64x16, optimizer.state.0.exp_avg_sq:64x16, "
    "optimizer.state.1.step:scalar, optimizer.state.1.exp_avg:64, optimizer.state.1.exp_avg_sq:64";

TEST_CASE("torch_save nested container: data.pkl padded to the container's pickle size") {
  auto sd = torch_save::ParseTorchStateDict(kNested, "none");
  REQUIRE(sd.ok());
  const uint64_t own = torch_save::TorchOwnPickleSize(*sd);
  CHECK(torch_save::TorchPickle(*sd).size() == own);
  sd->pickle_bytes = 958;  // what torch 1.13 pickles that dict to (unzip -lv: ck/data.pkl)
  REQUIRE(own < 958);
  const std::string padded = torch_save::TorchPickle(*sd);
  CHECK(padded.size() == 958);
  CHECK(padded[static_cast<size_t>(own) - 1] == '.');  // STOP, then what the unpickler never reads
  CHECK(padded.substr(0, static_cast<size_t>(own)) == torch_save::TorchPickle([&] {
          auto copy = *sd;
          copy.pickle_bytes = 0;
          return copy;
        }()));
  CHECK(torch_save::TorchOwnPickleSize(*sd) == own);
}

TEST_CASE("torch_save nested container: the writes torch.save makes, worked by hand") {
  auto sd = torch_save::ParseTorchStateDict(kNested, "none");
  REQUIRE(sd.ok());
  sd->pickle_bytes = 958;
  // Archive "ck": data.pkl's header 30 + "ck/data.pkl" 11 + FB extra 4 + 19 pad -> data at 64,
  // ends 1022, its descriptor 1038; data/0's header to 1081, padded to 1088. data.pkl (< 1 KiB)
  // is buffered, so the first writev is 1088 buffered bytes + data/0's 4096 = 5184.
  // data/1 (256 B) and data/2 (4 B) are buffered with their headers; data/3 starts at 5632:
  // writev(5632 - 5184 = 448, 4096) = 4544. data/4 starts 64 bytes after data/3's end (9728):
  // writev(64, 4096) = 4160. The rest (data/5-7, version, a 553-byte central directory of ten
  // entries, 98 bytes of end records) is buffered and leaves in the close: 15325 - 13888 = 1437.
  const std::vector<TorchWrite> expected{{0, 5184}, {5184, 4544}, {9728, 4160}, {13888, 1437}};
  auto requests = torch_save::TorchSaveRequests("ck", *sd);
  REQUIRE(requests.ok());
  CHECK(*requests == expected);
  CHECK(torch_save::TorchSaveFileSize("ck", *sd) == 15325);
}

// What `dlio-run fit` reads back from such a file when torch is installed: every tensor of the
// container by its path, in key order, and data.pkl's size, which give the same writes.
TEST_CASE("torch_save nested container: a file torch.save wrote reads back as its writes") {
  testing::TempDir dir;
  const std::string script = dir / "save.py";
  testing::WriteTextFile(script,
                         "import sys\n"
                         "try:\n"
                         "    import torch\n"
                         "except ImportError:\n"
                         "    sys.exit(3)\n"
                         "torch.manual_seed(0)\n"
                         "m = torch.nn.Linear(16, 64)\n"
                         "opt = torch.optim.Adam(m.parameters(), lr=1e-3)\n"
                         "m(torch.ones(2, 16)).sum().backward()\n"
                         "opt.step()\n"
                         "torch.save({'module': m.state_dict(), 'optimizer': opt.state_dict(), "
                         "'global_steps': 1}, sys.argv[1])\n");
  const std::string path = dir / "ck.pt";
  const auto run = testing::RunCommand(Quoted(testing::SystemPython()) + ' ' + Quoted(script) +
                                       ' ' + Quoted(path));
  INFO(run.output);
  if (run.exit_code == 3) return;  // no torch
  REQUIRE(run.exit_code == 0);
  const std::string bytes = testing::ReadTextFile(path);
  auto read = checkpoint_internal::ReadTorchSave(
      path, bytes.size(), [&](uint64_t offset, uint64_t n) -> Result<std::string> {
        return bytes.substr(static_cast<size_t>(offset), static_cast<size_t>(n));
      });
  INFO(read.status().ToString());
  REQUIRE(read.ok());
  CHECK(read->archive_name == "ck");
  CHECK(read->modules == "none");
  auto text = torch_save::TorchStateDictText(read->state_dict);
  REQUIRE(text.ok());
  CHECK(*text ==
        "module.weight:64x16, module.bias:64, optimizer.state.0.step:scalar, "
        "optimizer.state.0.exp_avg:64x16, optimizer.state.0.exp_avg_sq:64x16, "
        "optimizer.state.1.step:scalar, optimizer.state.1.exp_avg:64, "
        "optimizer.state.1.exp_avg_sq:64");
  const uint64_t pickle = read->state_dict.pickle_bytes;
  CHECK(pickle > torch_save::TorchOwnPickleSize(read->state_dict));
  CHECK(torch_save::TorchSaveFileSize("ck", read->state_dict) == bytes.size());
  auto requests = torch_save::TorchSaveRequests("ck", read->state_dict);
  REQUIRE(requests.ok());
  uint64_t end = 0;
  for (const TorchWrite& w : *requests) end = w.offset + w.size;
  CHECK(end == bytes.size());
  if (pickle == 958) {  // PyTorch 1.13 on Python 3.11, as worked out above
    CHECK(*requests ==
          std::vector<TorchWrite>{{0, 5184}, {5184, 4544}, {9728, 4160}, {13888, 1437}});
  }
}

// deepspeed_save_resume.py's save of step 16, as strace showed it: two torch.save files. The
// model states (an MLP 16384-64-64-10: six storages, data.pkl 1282 bytes, so it leaves in its own
// writev with its 128-byte header) and the optimizer states (Adam: step, exp_avg, exp_avg_sq per
// parameter, 18 storages whose records are in key order 0, 1, 10, ..., 17, 2, ..., 9; data.pkl
// 1631 bytes).
constexpr char kModel[] =
    "0.weight:64x16384, 0.bias:64, 2.weight:64x64, 2.bias:64, 4.weight:10x64, 4.bias:10";

// The optimizer's 18 storages named by their keys (as dlio-run fit names them when the paths,
// "optimizer_state_dict.state.0.exp_avg", would pickle past the container's 1631 bytes).
std::string OptimizerStates() {
  const char* shapes[] = {"64x16384", "64", "64x64", "64", "10x64", "10"};
  std::string out;
  for (int i = 0; i < 6; ++i) {
    const std::string k = std::to_string(3 * i);
    out += (i ? ", " : "") + k + ":scalar, " + std::to_string(3 * i + 1) + ":" + shapes[i] + ", " +
           std::to_string(3 * i + 2) + ":" + shapes[i];
  }
  return out;
}

TEST_CASE("torch_save nested container: DeepSpeed's model and optimizer states files") {
  auto storage = std::make_unique<RecordingStorage>(NewMemoryStorage());
  RecordingStorage* recorded = storage.get();
  CheckpointOptions options;
  options.name = "torch_save";
  options.folder = "/ckpt";
  options.sections.Get<TorchSaveOptions>().file_name =
      "mp_rank_00_model_states.pt, zero_pp_rank_0_mp_rank_00_optim_states.pt";
  options.sections.Get<TorchSaveOptions>().state_dict =
      std::string(kModel) + "; " + OptimizerStates();
  options.sections.Get<TorchSaveOptions>().modules = "none";
  options.sections.Get<TorchSaveOptions>().pickle_bytes = "1282, 1631";
  auto made = MakeTorchSave(options, storage.get());
  INFO(made.status().ToString());
  REQUIRE(made.ok());
  auto saved = (*made)->Save(0, 16);
  INFO(saved.status().ToString());
  REQUIRE(saved.ok());
  REQUIRE(saved->files.size() == 2);
  CHECK(saved->files[0].path == "/ckpt/ckpt-000000/mp_rank_00_model_states.pt");
  CHECK(saved->files[1].path == "/ckpt/ckpt-000000/zero_pp_rank_0_mp_rank_00_optim_states.pt");
  CHECK(saved->files[0].bytes == 4216791);  // ls -l of the program's files
  CHECK(saved->files[1].bytes == 8433755);
  // strace: writev(128 + 1282), writev(126 + 4194304), writev(512 + 16384), writev(512 + 2560),
  // write(983).
  const std::vector<uint64_t> model{1410, 4194430, 16896, 3072, 983};
  // writev(128 + 1631), (225 + 4 MiB), (1024 + 2560), (128 + 2560), (640 + 4 MiB),
  // (1152 + 16384), (128 + 16384), (274 + 1831: the central directory), write(98).
  const std::vector<uint64_t> optim{1759, 4194529, 3584, 2688, 4194944, 17536, 16512, 2105, 98};
  for (const auto& [suffix, sizes] : {std::pair{std::string("model_states.pt"), model},
                                      {std::string("optim_states.pt"), optim}}) {
    INFO(suffix);
    std::vector<uint64_t> got;
    uint64_t at = 0;
    for (const TorchWrite& w : recorded->Of(suffix)) {
      CHECK(w.offset == at);
      at += w.size;
      got.push_back(w.size);
    }
    CHECK(got == sizes);
  }
  // The model states file is written first, as the program does.
  REQUIRE(!recorded->writes.empty());
  CHECK(recorded->writes.front().path == saved->files[0].path);
}

// PlanTorchSaveFiles refuses `options` with a message holding `part`.
void Refused(const CheckpointOptions& options, const std::string& part) {
  auto plan = checkpoint_internal::PlanTorchSaveFiles(options);
  INFO(part);
  REQUIRE_FALSE(plan.ok());
  CHECK(plan.status().ToString().find(part) != std::string::npos);
}

TEST_CASE("torch_save nested container: bad file groups and pickle sizes are refused") {
  CheckpointOptions options;
  options.sections.Get<TorchSaveOptions>().file_name = "a.pt, b.pt";
  options.sections.Get<TorchSaveOptions>().state_dict = "w:4";
  Refused(options, "checkpoint.torch_state_dict");
  options.sections.Get<TorchSaveOptions>().state_dict = "w:4; v:8";
  options.sections.Get<TorchSaveOptions>().pickle_bytes = "1000, 2000, 3000";
  Refused(options, "checkpoint.torch_pickle_bytes");
  options.sections.Get<TorchSaveOptions>().pickle_bytes = "10";  // smaller than either pickle
  Refused(options, "alone pickles to");
  options.sections.Get<TorchSaveOptions>().pickle_bytes = "12k";
  Refused(options, "not a byte count");
  options.sections.Get<TorchSaveOptions>().pickle_bytes = "";
  options.sections.Get<TorchSaveOptions>().file_name = "a.pt, a.pt";
  Refused(options, "named twice");
  options.sections.Get<TorchSaveOptions>().file_name = "a.pt, b.pt";
  options.sections.Get<TorchSaveOptions>().pickle_bytes = "2000";  // one value for both files
  auto plan = checkpoint_internal::PlanTorchSaveFiles(options);
  INFO(plan.status().ToString());
  REQUIRE(plan.ok());
  REQUIRE(plan->size() == 2);
  CHECK((*plan)[0].torch->pickle_bytes == 2000);
  CHECK((*plan)[1].torch->pickle_bytes == 2000);
  CHECK((*plan)[1].name == "b.pt");
  CHECK((*plan)[1].bytes == torch_save::TorchSaveFileSize("b", *(*plan)[1].torch));
}

TEST_CASE("checkpoint.tag_file: a file name beside the checkpoint folders, or refused") {
  auto storage = NewMemoryStorage();
  storage->Bind(SystemClock(), nullptr);
  CheckpointOptions options;
  options.name = "torch_save";
  options.folder = "/ckpt";
  options.sections.Get<TorchSaveOptions>().state_dict = "w:4";
  for (const char* bad : {"a/latest", "..", ".dlio-tag", "ckpt-000001"}) {
    options.tag_file = bad;
    auto made = MakeTorchSave(options, storage.get());
    INFO(bad);
    REQUIRE_FALSE(made.ok());
    CHECK(made.status().ToString().find("checkpoint.tag_file") != std::string::npos);
  }
  options.tag_file = "latest";
  auto made = MakeTorchSave(options, storage.get());
  REQUIRE(made.ok());
  REQUIRE((*made)->Save(1, 8).ok());
  REQUIRE((*made)->Save(1, 16).ok());
  auto tag = storage->Open("/ckpt/latest", OpenMode::kRead);
  REQUIRE(tag.ok());
  std::string text(64, '\0');
  auto got = (*tag)->ReadSomeAt(0, text.size(), text.data());
  REQUIRE(got.ok());
  CHECK(text.substr(0, *got) == "ckpt-000001");  // the newest save's folder, one write
  CHECK((*made)->Load(1).ok());
}

}  // namespace
}  // namespace dlio
