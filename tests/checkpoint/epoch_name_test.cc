// checkpoint.folder_name and torch_file_name with {epoch}: the epoch a save happens in (from 0, as
// PyTorch Lightning counts; Checkpointer::Save's epoch counts from 1), zero-padded as {id} and
// {step} are, refused by the same rules, and read back from the names by a checkpointer built anew
// (what a resumed run's epochs go on from).
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "checkpoint/checkpointer_test_util.h"
#include "checkpoint/folder_name.h"
#include "checkpoint/torch_save_options.h"
#include "dlio/checkpointer.h"
#include "dlio/storage.h"

namespace dlio {
namespace {

using checkpoint_internal::FolderNameTemplate;
using checkpoint_test::Build;
using checkpoint_test::Make;
using checkpoint_test::MemoryStorage;

constexpr char kKey[] = "checkpoint.torch_file_name";

// Lightning's ModelCheckpoint: every save's file side by side in ck/, epoch={epoch}-step={step}.
CheckpointOptions LightningSteps() {
  CheckpointOptions options;
  options.name = "torch_save";
  options.folder = "ck";
  options.folder_name = ".";
  auto& torch = options.sections.Get<TorchSaveOptions>();
  torch.state_dict = "0.weight:16x8, 0.bias:16";
  torch.file_name = "epoch={epoch}-step={step}.ckpt";
  return options;
}

TEST_CASE("epoch placeholder: names from the epoch, zero-padded, and matched back",
          "[checkpoint]") {
  auto t = FolderNameTemplate::ParseFileName("epoch={epoch}-step={step}.ckpt", kKey);
  REQUIRE(t.ok());
  CHECK(t->names_epoch());
  CHECK(t->per_save());
  CHECK_FALSE(t->names_id());
  CHECK(t->Name({5, 12, 1}) == "epoch=1-step=12.ckpt");
  CHECK(t->Name({5, 12, -1}) == "epoch=0-step=12.ckpt");  // an unknown epoch counts as 0
  auto m = t->Match("epoch=10-step=104.ckpt");
  REQUIRE(m);
  CHECK(m->epoch == std::optional<uint64_t>(10));
  CHECK(m->step == std::optional<uint64_t>(104));
  CHECK_FALSE(m->id);
  CHECK_FALSE(t->Match("epoch=-step=4.ckpt"));

  auto folder = FolderNameTemplate::Parse("run{id}-epoch{epoch:03}");
  REQUIRE(folder.ok());
  CHECK(folder->Name({2, 40, 7}) == "run2-epoch007");
  CHECK(folder->Name({2, 40, 1234}) == "run2-epoch1234");  // wider than the width: all digits
  m = folder->Match("run2-epoch007");
  REQUIRE(m);
  CHECK(m->epoch == std::optional<uint64_t>(7));
  CHECK(m->id == std::optional<uint64_t>(2));
  // {epoch} alone names a folder per save.
  CHECK(FolderNameTemplate::Parse("epoch_{epoch}").ok());
  // The run's epochs count from 1, the names' from 0.
  CHECK(checkpoint_internal::NamedEpoch(1) == 0);
  CHECK(checkpoint_internal::NamedEpoch(3) == 2);
}

TEST_CASE("epoch placeholder: refused by the rules of the others, naming the key", "[checkpoint]") {
  const std::vector<std::pair<std::string, std::string>> bad{
      {"e{epoch}-{epoch}", "has {epoch} twice"},
      {"{epoch}{step}", "two placeholders with no text between them"},
      {"s{step}{epoch}", "two placeholders with no text between them"},
      {"e{epoch}0", "a digit right after a placeholder"},
      {"e{epoch:021}", "a width is '0' and 1 to 20 digits"},
      {"e{epoch:3}", "a width is '0' and 1 to 20 digits"},
      {"e{Epoch}", "unknown placeholder {Epoch} (use {id}, {step} or {epoch}"},
      {"e{epoch", "without its '}'"},
  };
  for (const auto& [text, why] : bad) {
    CAPTURE(text);
    auto folder = FolderNameTemplate::Parse(text);
    REQUIRE_FALSE(folder.ok());
    CHECK(folder.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(folder.status().message(), Catch::StartsWith("checkpoint.folder_name: '" + text));
    CHECK_THAT(folder.status().message(), Catch::Contains(why));
    auto file = FolderNameTemplate::ParseFileName(text + ".ckpt", kKey);
    REQUIRE_FALSE(file.ok());
    CHECK_THAT(file.status().message(), Catch::StartsWith("checkpoint.torch_file_name: '"));
    CHECK_THAT(file.status().message(), Catch::Contains(why));
  }
  // The checkpointer refuses it before writing anything.
  auto storage = MemoryStorage();
  CheckpointOptions options = LightningSteps();
  options.sections.Get<TorchSaveOptions>().file_name = "epoch={epoch}{step}.ckpt";
  auto refused = Build(options, storage.get());
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.status().message(),
             Catch::Contains("checkpoint.torch_file_name: 'epoch={epoch}{step}.ckpt'"));
  CHECK_FALSE(*storage->Exists("ck"));
}

// The per-step cadence of lightning_steps_ckpt.py: 10 steps an epoch, a save every 4 steps.
TEST_CASE("epoch placeholder: several saves an epoch are named by the epoch they happen in",
          "[checkpoint]") {
  auto storage = MemoryStorage();
  auto ck = Make(LightningSteps(), storage.get());
  // (run epoch from 1, global step) -> the file, by hand: the epoch from 0.
  const std::vector<std::tuple<uint64_t, int64_t, std::string>> saves{
      {1, 4, "ck/epoch=0-step=4.ckpt"},   {1, 8, "ck/epoch=0-step=8.ckpt"},
      {2, 12, "ck/epoch=1-step=12.ckpt"}, {2, 16, "ck/epoch=1-step=16.ckpt"},
      {2, 20, "ck/epoch=1-step=20.ckpt"}, {3, 24, "ck/epoch=2-step=24.ckpt"},
      {3, 28, "ck/epoch=2-step=28.ckpt"}};
  for (const auto& [epoch, step, path] : saves) {
    auto saved = ck->Save(epoch, step);
    INFO(saved.status().ToString());
    REQUIRE(saved.ok());
    REQUIRE(saved->files.size() == 1);
    CHECK(saved->files[0].path == path);
    CHECK(saved->step == step);
    CHECK(saved->epoch == static_cast<int64_t>(epoch) - 1);
  }
  auto listed = storage->List("ck");
  REQUIRE(listed.ok());
  CHECK(listed->size() == saves.size());  // the files alone: no manifest side by side
  auto loaded = ck->Load(2);
  REQUIRE(loaded.ok());
  CHECK(loaded->files.at(0).path == "ck/epoch=1-step=12.ckpt");
  CHECK(loaded->epoch == 1);
}

// Lightning's default cadence: one save at each epoch's end, in a folder of its own per epoch.
TEST_CASE("epoch placeholder: a save at an epoch's end is named by that epoch", "[checkpoint]") {
  auto storage = MemoryStorage();
  CheckpointOptions options;
  options.name = "model";
  options.folder = "ck";
  options.model_size_bytes = 1000;
  options.folder_name = "epoch_{epoch:02}";
  auto ck = Make(options, storage.get());
  const std::vector<std::pair<uint64_t, std::string>> saves{{1, "ck/epoch_00/model-rank0.bin"},
                                                            {2, "ck/epoch_01/model-rank0.bin"},
                                                            {3, "ck/epoch_02/model-rank0.bin"}};
  for (const auto& [epoch, path] : saves) {
    auto saved = ck->Save(epoch, static_cast<int64_t>(epoch) * 6);  // 6 steps an epoch
    INFO(saved.status().ToString());
    REQUIRE(saved.ok());
    CHECK(saved->files.at(0).path == path);
    CHECK(saved->epoch == static_cast<int64_t>(epoch) - 1);
    CHECK(saved->step == -1);  // the name holds no step
  }
  // Built again (a resumed run): the folders are listed, ids by their epochs.
  auto again = Make(options, storage.get());
  CHECK(again->next_id() == 3);
  auto complete = again->CompleteIds();
  REQUIRE(complete.ok());
  CHECK(*complete == std::vector<uint64_t>{0, 1, 2});
  auto loaded = again->Load(2);
  REQUIRE(loaded.ok());
  CHECK(loaded->files.at(0).path == "ck/epoch_02/model-rank0.bin");
  CHECK(loaded->epoch == 2);
}

TEST_CASE("epoch placeholder: a checkpointer built again reads each save's epoch from its file",
          "[checkpoint]") {
  auto storage = MemoryStorage();
  {
    auto ck = Make(LightningSteps(), storage.get());
    for (const auto& save : std::vector<std::pair<uint64_t, int64_t>>{{1, 4}, {1, 8}, {2, 12}}) {
      REQUIRE(ck->Save(save.first, save.second).ok());
    }
  }
  auto again = Make(LightningSteps(), storage.get());
  auto complete = again->CompleteIds();
  INFO(complete.status().ToString());
  REQUIRE(complete.ok());
  CHECK(*complete == std::vector<uint64_t>{0, 1, 2});  // by step: 4, 8, 12
  auto newest = again->Load(2);
  INFO(newest.status().ToString());
  REQUIRE(newest.ok());
  CHECK(newest->files.at(0).path == "ck/epoch=1-step=12.ckpt");
  CHECK(newest->step == 12);
  CHECK(newest->epoch == 1);  // a resumed run goes on in epoch 2
  // The resumed run's saves go on from there (the runner adds the resumed step and epochs).
  auto next = again->Save(2 + 1, 12 + 4);
  REQUIRE(next.ok());
  CHECK(next->files.at(0).path == "ck/epoch=2-step=16.ckpt");

  // A folder per save with {id} and the epoch in the file's name alone: found by listing.
  CheckpointOptions options = LightningSteps();
  options.folder = "ck2";
  options.folder_name = "ckpt-{id}";
  options.sections.Get<TorchSaveOptions>().file_name = "epoch={epoch}.ckpt";
  {
    auto ck = Make(options, storage.get());
    REQUIRE(ck->Save(4, 40).ok());
  }
  auto listed = Make(options, storage.get())->Load(0);
  INFO(listed.status().ToString());
  REQUIRE(listed.ok());
  CHECK(listed->files.at(0).path == "ck2/ckpt-0/epoch=3.ckpt");
  CHECK(listed->epoch == 3);
}

}  // namespace
}  // namespace dlio
