// FitTrace on hand-built traces of torch.save's writes (checkpoint/torch_save_file.h's requests):
// the fitted checkpoint.torch_state_dict makes dlio's torch_save checkpointer issue the traced
// requests, from the writes alone or read from the file when it still exists.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "checkpoint/folder_name.h"
#include "dlio/clock.h"
#include "dlio/profile_fit.h"
#include "dlio/storage.h"
#include "dlio/str_cat.h"
#include "format/torch/torch_save_file.h"
#include "profile/analysis_test_util.h"
#include "profile/fit_test_util.h"

namespace dlio {
namespace {

using fit_test::Fit;
using fit_test::Value;
using testing::AddEvent;
using torch_save::TorchArchiveName;
using torch_save::TorchSaveRequests;
using torch_save::TorchStateDict;
using torch_save::TorchWrite;

// The nn.Sequential(Linear(1024, 512), ReLU, Linear(512, 512), ReLU, Linear(512, 10)) of
// tests/fidelity/programs/torch_save_ckpt.py.
constexpr char kMlp[] =
    "0.weight:512x1024, 0.bias:512, 2.weight:512x512, 2.bias:512, 4.weight:10x512, 4.bias:10";
constexpr char kMlpModules[] = "0, 1, 2, 3, 4";

TorchStateDict Parse(const std::string& tensors, const std::string& modules) {
  auto sd = torch_save::ParseTorchStateDict(tensors, modules);
  REQUIRE(sd.ok());
  return std::move(sd).value();
}

std::vector<TorchWrite> Requests(const std::string& path, const TorchStateDict& sd) {
  auto r = TorchSaveRequests(TorchArchiveName(path), sd);
  REQUIRE(r.ok());
  return std::move(r).value();
}

// torch.save(sd, path) at `start_us`, as the interposer records it.
void AddSave(ProfileTrace* t, const std::string& path, const TorchStateDict& sd, int64_t start_us) {
  AddEvent(t, 7, 7, "openat", start_us, 5, path);
  int64_t now = start_us + 10;
  for (const TorchWrite& w : Requests(path, sd)) {
    AddEvent(t, 7, 7, "writev", now, 20, path, static_cast<int64_t>(w.offset),
             static_cast<int64_t>(w.size), static_cast<int64_t>(w.size));
    now += 30;
  }
  AddEvent(t, 7, 7, "close", now, 1, path);
}

ProfileTrace Saves(const std::vector<std::string>& paths, const TorchStateDict& sd) {
  ProfileTrace t;
  int64_t now = 0;
  for (const std::string& p : paths) {
    AddSave(&t, p, sd, now);
    now += 50'000;
  }
  return t;
}

std::string PathBasename(const std::string& path) { return path.substr(path.rfind('/') + 1); }

// The file name the fit gives save `id` after global step `step` (its template's).
std::string FileName(const FitResult& r, uint64_t id, int64_t step) {
  auto names = checkpoint_internal::FolderNameTemplate::ParseFileName(
      Value(r, "checkpoint.torch_file_name"), "checkpoint.torch_file_name");
  REQUIRE(names.ok());
  return names->Name({id, step});
}

// The state dict the fit describes, and the requests the emulation issues with it in save `id`
// after global step `step`.
std::vector<TorchWrite> Emulated(const FitResult& r, uint64_t id = 0, int64_t step = 0) {
  INFO(FitYaml(r, {"t"}));
  REQUIRE(Value(r, "checkpoint.type") == "torch_save");
  std::string modules = Value(r, "checkpoint.torch_modules");
  if (modules == "\"\"") modules.clear();
  const TorchStateDict sd = Parse(Value(r, "checkpoint.torch_state_dict"), modules);
  return Requests(FileName(r, id, step), sd);
}

TEST_CASE("fit: torch.save's writes alone give a state dict with the same requests") {
  const TorchStateDict mlp = Parse(kMlp, kMlpModules);
  const std::vector<std::string> paths{"/ck/model-8.pt", "/ck/model-16.pt", "/ck/model-24.pt",
                                       "/ck/model-32.pt"};
  const FitResult r = Fit(Saves(paths, mlp));
  CHECK(Value(r, "checkpoint.num_checkpoints_write") == "4");
  // The name holds the step (a save every 8 steps), so "model-8.pt", a byte shorter than the
  // others and with other headers, is emulated as it was written too.
  CHECK(Value(r, "checkpoint.torch_file_name") == "model-{step}.pt");
  // Side by side in /ck/, as torch.save left them: no folder per save.
  CHECK(Value(r, "checkpoint.folder_name") == ".");
  CHECK_THAT(r.Find("checkpoint.folder_name")->reason,
             Catch::Contains("side by side in one folder"));
  CHECK_THAT(r.Find("checkpoint.torch_file_name")->reason,
             Catch::Contains("{step} the global step (a save every 8 steps)"));
  for (size_t k = 0; k < paths.size(); ++k) {
    CHECK(Emulated(r, k, static_cast<int64_t>(8 * (k + 1))) == Requests(paths[k], mlp));
  }
  CHECK(Requests(paths[1], mlp) != Requests(paths[0], mlp));
  CHECK(r.Find("checkpoint.torch_state_dict")->confidence == FitConfidence::kMedium);
  CHECK(r.Find("checkpoint.torch_state_dict")->reason.find("not in the writes") !=
        std::string::npos);
  CHECK(r.Find("checkpoint.model_size_bytes") == nullptr);
}

TEST_CASE("fit: one file a save whose names differ in length is one file per checkpoint") {
  // PyTorch Lightning's ModelCheckpoint names: one torch.save file a save, "epoch=0-step=6.ckpt"
  // a byte shorter than the two after it. Taken for two files of every checkpoint, the emulation
  // wrote twice the program's files and bytes.
  const TorchStateDict mlp = Parse(kMlp, kMlpModules);
  const std::vector<std::string> paths{"/job/ckpt/epoch=0-step=6.ckpt",
                                       "/job/ckpt/epoch=1-step=12.ckpt",
                                       "/job/ckpt/epoch=2-step=18.ckpt"};
  const FitResult r = Fit(Saves(paths, mlp));
  CHECK(Value(r, "checkpoint.num_checkpoints_write") == "3");
  CHECK(Value(r, "checkpoint.torch_state_dict").find(';') == std::string::npos);
  CHECK(r.Find("checkpoint.type")->reason.find("files per checkpoint") == std::string::npos);
  // One file a save, named per save: the checkpoint count and the global step.
  CHECK(Value(r, "checkpoint.torch_file_name") == "epoch={id}-step={step}.ckpt");
  CHECK_THAT(r.Find("checkpoint.torch_file_name")->reason,
             Catch::Contains("{id} counts the checkpoints, {step} the global step"));
  CHECK(FileName(r, 0, 6) == "epoch=0-step=6.ckpt");
  // The state dict inferred from the writes alone reproduces the files of the longer names it was
  // inferred from (the shorter one's small tensors share its writevs otherwise).
  for (size_t k = 1; k < paths.size(); ++k) {
    CHECK(FileName(r, k, static_cast<int64_t>(6 * (k + 1))) == PathBasename(paths[k]));
    CHECK(Emulated(r, k, static_cast<int64_t>(6 * (k + 1))) == Requests(paths[k], mlp));
  }
}

TEST_CASE("fit: a number of a save's file name that neither counts nor steps keeps the name") {
  const TorchStateDict mlp = Parse(kMlp, kMlpModules);
  // A loss in the name (5, 3, 4): no count, no step; the traced name of the most files stays.
  // A name the same in every save's own folder has nothing to template either.
  for (const auto& [paths, kept] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"/job/ck/loss-5.pt", "/job/ck/loss-3.pt", "/job/ck/loss-4.pt"}, "loss-"},
           {{"/job/ck/s1/model.pt", "/job/ck/s2/model.pt", "/job/ck/s3/model.pt"}, "model.pt"}}) {
    const FitResult r = Fit(Saves(paths, mlp));
    const std::string name = Value(r, "checkpoint.torch_file_name");
    CHECK(name.find('{') == std::string::npos);
    CHECK(name.rfind(kept, 0) == 0);
    // A name the same in every save needs a folder of its own per save.
    CHECK(
        (r.Find("checkpoint.folder_name") == nullptr || Value(r, "checkpoint.folder_name") != "."));
  }
}

TEST_CASE("fit: data.pkl alone, small tensors at the close or between large ones are inferred") {
  // 14 tensors: data.pkl over 1 KiB leaves alone; keys sort as strings (0, 1, 10, ...).
  std::string many;
  for (int k = 0; k < 7; ++k) {
    many +=
        "layer" + std::to_string(k) + ".weight:64x64, layer" + std::to_string(k) + ".bias:512, ";
  }
  // A CNN: BatchNorm vectors of 64 bytes share writevs with the convolutions after them.
  const std::string cnn =
      "0.weight:16x3x3x3, 0.bias:16, 1.weight:16, 1.bias:16, 1.running_mean:16, "
      "1.running_var:16, 1.num_batches_tracked:scalar:int64, 4.weight:8x16x3x3, 4.bias:8, "
      "6.weight:10x128, 6.bias:10";
  // A deeper one: 24 blocks of a 64x64x3x3 convolution and its BatchNorm (120 tensors).
  std::string deep;
  for (int k = 0; k < 24; ++k) {
    std::string b = "b";
    b += std::to_string(k);
    deep += b + ".conv.weight:64x64x3x3, " + b + ".bn.weight:64, " + b + ".bn.bias:64, " + b +
            ".bn.running_mean:64, " + b + ".bn.running_var:64, ";
  }
  for (const std::string& tensors :
       {many, std::string("w:100000, b:3, c:5"), std::string("w:3000:fp16, b:7:int8"),
        std::string("only:40"), cnn, deep}) {
    INFO(tensors);
    const TorchStateDict sd = Parse(tensors, "");
    const FitResult r = Fit(Saves({"/job/ck_a.pt", "/job/ck_b.pt"}, sd));
    CHECK(Emulated(r) == Requests("/job/ck_a.pt", sd));
  }
}

TEST_CASE("fit: a torch.save file that still exists gives the exact state dict") {
  const TorchStateDict mlp = Parse(kMlp, kMlpModules);
  // The file's bytes, as torch.save (and dlio) write them.
  auto storage = NewMemoryStorage();
  storage->Bind(SystemClock(), nullptr);
  {
    auto f = storage->Open("/ck/model-16.pt", OpenMode::kWrite);
    REQUIRE(f.ok());
    REQUIRE(torch_save::WriteTorchSave(f->get(), "model-16", mlp, [](uint64_t, size_t n, char* d) {
              std::fill(d, d + n, '\1');
            }).ok());
  }
  FitOptions options;
  std::vector<std::string> asked;
  options.read_file = [&](const std::string& path, uint64_t offset,
                          uint64_t n) -> Result<std::string> {
    asked.push_back(path);
    DLIO_ASSIGN_OR_RETURN(auto f, storage->Open(path, OpenMode::kRead));
    std::string out(n, '\0');
    DLIO_RETURN_NOT_OK(f->ReadExactAt(offset, n, out.data()));
    return out;
  };
  const FitResult r = Fit(Saves({"/ck/model-16.pt", "/ck/model-24.pt"}, mlp), options);
  CHECK_FALSE(asked.empty());
  CHECK(Value(r, "checkpoint.torch_state_dict") == kMlp);
  CHECK(Value(r, "checkpoint.torch_modules") == kMlpModules);
  CHECK(r.Find("checkpoint.torch_state_dict")->confidence == FitConfidence::kHigh);
  CHECK(Emulated(r, 0, 16) == Requests("/ck/model-16.pt", mlp));

  SECTION("a corrupt file: the writes alone, and the reason says why") {
    options.read_file = [](const std::string& path, uint64_t offset,
                           uint64_t n) -> Result<std::string> {
      (void)path;
      (void)offset;
      return std::string(n, 'P');
    };
    const FitResult bad = Fit(Saves({"/ck/model-16.pt", "/ck/model-24.pt"}, mlp), options);
    CHECK(Emulated(bad, 0, 16) == Requests("/ck/model-16.pt", mlp));
    const std::string reason = bad.Find("checkpoint.torch_state_dict")->reason;
    CHECK(reason.find("from the writes") != std::string::npos);
    CHECK(reason.find("not read: /ck/model-16.pt: offset") != std::string::npos);
  }
}

TEST_CASE("fit: writes that are not torch.save's stay checkpoint.type model") {
  ProfileTrace t;
  for (int k = 0; k < 3; ++k) {
    const std::string path = "/ck/model-" + std::to_string(k) + ".pt";
    for (int w = 0; w < 4; ++w) {
      AddEvent(&t, 3, 3, "write", k * 50'000 + w * 20, 10, path, w * 65536, 65536, 65536);
    }
  }
  const FitResult r = Fit(t);
  CHECK(Value(r, "checkpoint.type") == "model");
  CHECK(Value(r, "checkpoint.model_size_bytes") == std::to_string(4 * 65536));
  // Many files of many sequential writes: each tried (briefly), none is torch.save's.
  ProfileTrace many;
  for (int k = 0; k < 10; ++k) {
    const std::string path = "/ck/big-" + std::to_string(k) + ".pt";
    for (int w = 0; w < 3000; ++w) {
      AddEvent(&many, 3, 3, "write", k * 5'000'000 + w * 20, 10, path, w * 4096, 4096, 4096);
    }
  }
  CHECK(Value(Fit(many), "checkpoint.type") == "model");
}

}  // namespace
}  // namespace dlio

namespace dlio {
namespace {

// PyTorch Lightning's ModelCheckpoint: 3 passes over 12 files of 100 KB in batches of 4 (3 steps a
// pass, 20 ms of compute after each); one torch.save after every `every` steps
// (every_n_train_steps), or with `every` 0 at each pass's end, named by the pass it happens in and
// the global step, epoch=<e>-step=<s>.ckpt. `paths` gets the saves' files.
ProfileTrace LightningSaves(const TorchStateDict& sd, int every, std::vector<std::string>* paths) {
  ProfileTrace t;
  int64_t now = 1'000'000;
  int step = 0;
  for (int epoch = 0; epoch < 3; ++epoch) {
    for (int b = 0; b < 3; ++b) {
      fit_test::AddBatchReads(&t, 7, b, &now);
      now += 20'000;
      ++step;
      if (every > 0 ? step % every != 0 : b != 2) continue;
      paths->push_back(StrCat("/job/ckpt/epoch=", epoch, "-step=", step, ".ckpt"));
      AddSave(&t, paths->back(), sd, now);
      now += 5'000;
    }
  }
  return t;
}

TEST_CASE("fit: a save's file named by the pass it happens in, several a pass, is {epoch}") {
  const TorchStateDict mlp = Parse(kMlp, kMlpModules);
  std::vector<std::string> paths;
  const FitResult r = Fit(LightningSaves(mlp, 2, &paths));
  // By hand: global steps 2 (pass 0), 4 and 6 (pass 1: 6 its last step), 8 (pass 2).
  REQUIRE(paths == std::vector<std::string>{
                       "/job/ckpt/epoch=0-step=2.ckpt", "/job/ckpt/epoch=1-step=4.ckpt",
                       "/job/ckpt/epoch=1-step=6.ckpt", "/job/ckpt/epoch=2-step=8.ckpt"});
  INFO(FitYaml(r, {"t"}));
  // 0, 1, 1, 2 counts no saves (two in pass 1): the pass, not {id}.
  CHECK(Value(r, "checkpoint.torch_file_name") == "epoch={epoch}-step={step}.ckpt");
  CHECK_THAT(r.Find("checkpoint.torch_file_name")->reason,
             Catch::Contains("{epoch} the pass over the data each save happened in"));
  CHECK(Value(r, "checkpoint.folder_name") == ".");
  CHECK(Value(r, "checkpoint.steps_between_checkpoints") == "2");
  auto names = checkpoint_internal::FolderNameTemplate::ParseFileName(
      Value(r, "checkpoint.torch_file_name"), "checkpoint.torch_file_name");
  REQUIRE(names.ok());
  // The emulation's saves (ids 0.., global steps 2.., epochs from the run's passes) make the
  // program's names.
  const std::vector<std::pair<int64_t, int64_t>> step_epoch{{2, 0}, {4, 1}, {6, 1}, {8, 2}};
  for (size_t k = 0; k < paths.size(); ++k) {
    CHECK(names->Name({k, step_epoch[k].first, step_epoch[k].second}) == PathBasename(paths[k]));
  }
}

TEST_CASE("fit: names of one save a pass at its end stay {id}, the save count") {
  // lightning_ckpt.py's cadence: the pass and the save count agree, and {id} is kept.
  const TorchStateDict mlp = Parse(kMlp, kMlpModules);
  std::vector<std::string> paths;
  const FitResult r = Fit(LightningSaves(mlp, 0, &paths));
  REQUIRE(paths.size() == 3);
  CHECK(paths.back() == "/job/ckpt/epoch=2-step=9.ckpt");
  INFO(FitYaml(r, {"t"}));
  CHECK(Value(r, "checkpoint.torch_file_name") == "epoch={id}-step={step}.ckpt");
}

}  // namespace
}  // namespace dlio
