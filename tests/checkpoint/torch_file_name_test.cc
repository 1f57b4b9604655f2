// checkpoint.torch_file_name with {id} and {step}: each save's torch.save file named as the
// framework names it (model-{step}.pt; PyTorch Lightning's epoch={id}-step={step}.ckpt), sized for
// its own name, found again by its name when a checkpointer is built anew, and a save whose file
// is gone counted torn.
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "checkpoint/checkpointer_test_util.h"
#include "checkpoint/folder_name.h"
#include "checkpoint/torch_save_options.h"
#include "dlio/checkpointer.h"
#include "dlio/registries.h"
#include "dlio/storage.h"
#include "format/torch/torch_save_file.h"

namespace dlio {
namespace {

using checkpoint_internal::FolderNameTemplate;

constexpr char kStateDict[] = "0.weight:64x32, 0.bias:64, 2.weight:10x64, 2.bias:10";

using checkpoint_test::Build;
using checkpoint_test::Make;
using checkpoint_test::MemoryStorage;

CheckpointOptions LightningLike() {
  CheckpointOptions options;
  options.name = "torch_save";
  options.folder = "ck";
  auto& torch = options.sections.Get<TorchSaveOptions>();
  torch.state_dict = kStateDict;
  torch.file_name = "epoch={id}-step={step}.ckpt";
  return options;
}

// The size torch.save gives kStateDict's file of this name.
uint64_t TorchBytes(const std::string& name) {
  auto sd = torch_save::ParseTorchStateDict(kStateDict, "");
  REQUIRE(sd.ok());
  return torch_save::TorchSaveFileSize(torch_save::TorchArchiveName(name), *sd);
}

TEST_CASE("torch_file_name: a file name template may hold no placeholder, errors name the key",
          "[checkpoint]") {
  auto plain = FolderNameTemplate::ParseFileName("model.pt", "checkpoint.torch_file_name");
  REQUIRE(plain.ok());
  CHECK_FALSE(plain->per_save());
  CHECK(plain->Name({3, 9}) == "model.pt");
  auto steps = FolderNameTemplate::ParseFileName("model-{step}.pt", "checkpoint.torch_file_name");
  REQUIRE(steps.ok());
  CHECK(steps->per_save());
  CHECK(steps->Name({3, 9}) == "model-9.pt");
  // A folder's template still needs a placeholder.
  CHECK_FALSE(FolderNameTemplate::Parse("model.pt").ok());
  for (const char* bad : {"m-{batch}.pt", "m-{step}{id}.pt", "m-{step}7.pt", "m-{step.pt"}) {
    INFO(bad);
    auto t = FolderNameTemplate::ParseFileName(bad, "checkpoint.torch_file_name");
    REQUIRE_FALSE(t.ok());
    CHECK_THAT(t.status().message(), Catch::StartsWith("checkpoint.torch_file_name: '"));
  }
  // Refused when the checkpointer is built, before anything is written.
  auto storage = MemoryStorage();
  CheckpointOptions options = LightningLike();
  options.sections.Get<TorchSaveOptions>().file_name = "epoch={batch}.ckpt";
  auto refused = Build(options, storage.get());
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.status().message(),
             Catch::Contains("checkpoint.torch_file_name: 'epoch={batch}.ckpt'"));
  CHECK_FALSE(*storage->Exists("ck"));
}

TEST_CASE("torch_file_name: each save's file is named from its id and step and sized for it",
          "[checkpoint]") {
  auto storage = MemoryStorage();
  auto ck = Make(LightningLike(), storage.get());
  const std::vector<std::pair<int64_t, std::string>> saves{
      {6, "ck/ckpt-000000/epoch=0-step=6.ckpt"},
      {12, "ck/ckpt-000001/epoch=1-step=12.ckpt"},
      {18, "ck/ckpt-000002/epoch=2-step=18.ckpt"}};
  for (const auto& save : saves) {
    auto saved = ck->Save(1, save.first);
    INFO(saved.status().ToString());
    REQUIRE(saved.ok());
    REQUIRE(saved->files.size() == 1);
    const std::string& path = saved->files[0].path;
    CHECK(path == save.second);
    const uint64_t expected = TorchBytes(path.substr(path.rfind('/') + 1));
    CHECK(saved->files[0].bytes == expected);
    CHECK(*storage->FileSize(path) == expected);
  }
  // "epoch=0-step=6" is a byte shorter than the others: its file is sized for its own name.
  CHECK(TorchBytes("epoch=0-step=6.ckpt") != TorchBytes("epoch=1-step=12.ckpt"));
  auto read = ck->Load(0);
  REQUIRE(read.ok());
  CHECK(read->files.at(0).path == saves[0].second);
  CHECK(read->step == 6);
}

TEST_CASE("torch_file_name: a checkpointer built again finds each save's file by its name",
          "[checkpoint]") {
  auto storage = MemoryStorage();
  {
    auto ck = Make(LightningLike(), storage.get());
    for (int64_t step : {6, 12, 18, 24}) REQUIRE(ck->Save(1, step).ok());
  }
  // The save of step 12 lost its file (torn).
  REQUIRE(storage->Remove("ck/ckpt-000001/epoch=1-step=12.ckpt").ok());
  auto again = Make(LightningLike(), storage.get());
  auto complete = again->CompleteIds();
  INFO(complete.status().ToString());
  REQUIRE(complete.ok());
  CHECK(*complete == std::vector<uint64_t>{0, 2, 3});
  auto loaded = again->Load(2);
  INFO(loaded.status().ToString());
  REQUIRE(loaded.ok());
  CHECK(loaded->files.at(0).path == "ck/ckpt-000002/epoch=2-step=18.ckpt");
  CHECK(loaded->step == 18);  // the step the file's name holds, for a resumed run's count
  CHECK(loaded->bytes_read == TorchBytes("epoch=2-step=18.ckpt"));
  auto torn = again->Load(1);
  REQUIRE_FALSE(torn.ok());
  CHECK(torn.status().code() == StatusCode::kNotFound);
  CHECK_THAT(torn.status().message(),
             Catch::Contains("ck/ckpt-000001 holds no file named as checkpoint.torch_file_name "
                             "'epoch={id}-step={step}.ckpt'"));

  // A second file of the template in one save's folder: which one is the save's cannot be told,
  // so loading it and listing the complete ones are refused, naming the folder.
  {
    auto stray = storage->Open("ck/ckpt-000003/epoch=3-step=99.ckpt", OpenMode::kCreateNew);
    REQUIRE(stray.ok());
  }
  auto built = Make(LightningLike(), storage.get());
  for (const Status& s : {built->Load(3).status(), built->CompleteIds().status()}) {
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.message(), Catch::Contains("ck/ckpt-000003 holds several files named as "
                                            "checkpoint.torch_file_name"));
  }
}

CheckpointOptions FlatLike() {
  CheckpointOptions options = LightningLike();
  options.folder_name = ".";
  options.sections.Get<TorchSaveOptions>().file_name = "model-{step}.pt";
  return options;
}

TEST_CASE("torch_file_name: folder_name '.' puts each save's file side by side in the folder",
          "[checkpoint]") {
  auto storage = MemoryStorage();
  {
    auto ck = Make(FlatLike(), storage.get());
    for (int64_t step : {8, 16, 24}) {
      auto saved = ck->Save(1, step);
      INFO(saved.status().ToString());
      REQUIRE(saved.ok());
      CHECK(saved->files.at(0).path == "ck/model-" + std::to_string(step) + ".pt");
    }
    // No folder per save and no manifest: only the three files, as torch.save leaves them.
    auto listed = storage->List("ck");
    REQUIRE(listed.ok());
    CHECK(*listed == std::vector<std::string>{"model-16.pt", "model-24.pt", "model-8.pt"});
    CHECK(*ck->CompleteIds() == std::vector<uint64_t>{0, 1, 2});
    auto read = ck->Load(1);
    REQUIRE(read.ok());
    CHECK(read->files.at(0).path == "ck/model-16.pt");
  }
  // Built again: the checkpoints are the files, by step; a file cut short is torn.
  {
    auto f = storage->Open("ck/model-24.pt", OpenMode::kWrite);  // truncates
    REQUIRE(f.ok());
  }
  auto again = Make(FlatLike(), storage.get());
  CHECK(again->next_id() == 3);
  CHECK(*again->CompleteIds() == std::vector<uint64_t>{0, 1});
  auto loaded = again->Load(1);
  INFO(loaded.status().ToString());
  REQUIRE(loaded.ok());
  CHECK(loaded->files.at(0).path == "ck/model-16.pt");
  CHECK(loaded->step == 16);
  CHECK(loaded->bytes_read == TorchBytes("model-16.pt"));
  // A save whose name is already taken (the torn file, written by no save of this run) is
  // refused, not overwritten.
  auto clash = again->Save(1, 24);
  REQUIRE_FALSE(clash.ok());
  CHECK(clash.status().code() == StatusCode::kAlreadyExists);
}

TEST_CASE("torch_file_name: folder_name '.' needs names that change from save to save",
          "[checkpoint]") {
  auto storage = MemoryStorage();
  CheckpointOptions same = FlatLike();
  same.sections.Get<TorchSaveOptions>().file_name = "model.pt";
  auto refused = Build(same, storage.get());
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(
      refused.status().message(),
      Catch::Contains("checkpoint.folder_name: '.'") &&
          Catch::Contains("checkpoint.torch_file_name 'model.pt' has no {id}, {step} or {epoch}"));
  // The other types name their files the same in every save.
  CheckpointOptions model;
  model.name = "model";
  model.folder = "ck";
  model.model_size_bytes = 100;
  model.folder_name = ".";
  auto plain = Build(model, storage.get());
  REQUIRE_FALSE(plain.ok());
  CHECK_THAT(plain.status().message(), Catch::Contains("which checkpoint type 'torch_save' has") &&
                                           Catch::Contains("which 'h5py_save' writes"));
  CHECK_FALSE(*storage->Exists("ck"));
}

TEST_CASE("torch_file_name: with rank_mode root the ranks that write nothing list rank 0's files",
          "[checkpoint]") {
  auto storage = MemoryStorage();
  CheckpointOptions options = FlatLike();
  options.sections.Get<TorchSaveOptions>().file_name = "model-{rank}-{step}.pt";
  options.root_only = true;
  options.world = 2;
  {
    auto root = Make(options, storage.get());
    REQUIRE(root->Save(1, 8).ok());
    REQUIRE(root->Save(1, 16).ok());
  }
  CHECK(*storage->Exists("ck/model-0-16.pt"));
  options.rank = 1;
  auto other = Make(options, storage.get());
  CHECK(other->next_id() == 2);
  CHECK(*other->CompleteIds() == std::vector<uint64_t>{0, 1});
}

}  // namespace
}  // namespace dlio
