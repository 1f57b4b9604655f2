// checkpoint.folder_name: the template's names and matches, its validation, and a checkpointer
// that names its folders with it (DeepSpeed's global_step{step} and `latest` tag), then finds the
// newest by step when it is built again.
#include "checkpoint/folder_name.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "checkpoint/checkpointer_test_util.h"
#include "dlio/checkpointer.h"
#include "dlio/registries.h"
#include "dlio/storage.h"

namespace dlio {
namespace {

using checkpoint_internal::FolderNameTemplate;

FolderNameTemplate Parsed(const std::string& text) {
  auto t = FolderNameTemplate::Parse(text);
  INFO(text << ": " << t.status().ToString());
  REQUIRE(t.ok());
  return *t;
}

using checkpoint_test::Build;
using checkpoint_test::Make;
using checkpoint_test::MemoryStorage;

// The whole content of `path`.
std::string Content(Storage* storage, const std::string& path) {
  auto size = storage->FileSize(path);
  REQUIRE(size.ok());
  std::string text(*size, '\0');
  auto file = storage->Open(path, OpenMode::kRead);
  REQUIRE(file.ok());
  REQUIRE((*file)->ReadExactAt(0, text.size(), text.data()).ok());
  return text;
}

bool Exists(Storage* storage, const std::string& path) {
  auto exists = storage->Exists(path);
  REQUIRE(exists.ok());
  return *exists;
}

// DeepSpeed's layout with type model: one 3000-byte file per checkpoint in global_step<N>/.
CheckpointOptions DeepSpeedLike() {
  CheckpointOptions options;
  options.name = "model";
  options.folder = "ck";
  options.model_size_bytes = 3000;
  options.folder_name = "global_step{step}";
  options.tag_file = "latest";
  return options;
}

TEST_CASE("folder_name: names from the id and the step, zero-padded to a width", "[checkpoint]") {
  CHECK(FolderNameTemplate().Name({42, 7}) == "ckpt-000042");  // dlio's own, the default
  CHECK(FolderNameTemplate().Name({1234567, 7}) == "ckpt-1234567");
  CHECK(Parsed(checkpoint_internal::kDefaultFolderName).Name({3, 0}) == "ckpt-000003");
  CHECK(Parsed("global_step{step}").Name({5, 16}) == "global_step16");
  CHECK(Parsed("global_step{step}").Name({5, -3}) == "global_step0");
  CHECK(Parsed("iter_{step:07}").Name({0, 100}) == "iter_0000100");
  CHECK(Parsed("{step}").Name({9, 24}) == "24");
  CHECK(Parsed("run{id:03}-step{step}.ckpt").Name({2, 80}) == "run002-step80.ckpt");
  CHECK(Parsed("global_step{step}").names_step());
  CHECK_FALSE(Parsed("global_step{step}").names_id());
  CHECK(FolderNameTemplate().names_id());
  CHECK_FALSE(FolderNameTemplate().names_step());
}

TEST_CASE("folder_name: a name matches when its literal text matches and its numbers are digits",
          "[checkpoint]") {
  const FolderNameTemplate ds = Parsed("global_step{step}");
  auto m = ds.Match("global_step24");
  REQUIRE(m);
  CHECK(m->step == std::optional<uint64_t>(24));
  CHECK_FALSE(m->id);
  for (const char* other : {"global_step", "global_stepX", "global_step24x", "xglobal_step24",
                            "global_step-1", "global_step12345678901234567890", "latest"}) {
    CAPTURE(other);
    CHECK_FALSE(ds.Match(other));
  }
  const FolderNameTemplate both = Parsed("run{id:03}-step{step}.ckpt");
  m = both.Match("run002-step80.ckpt");
  REQUIRE(m);
  CHECK(m->id == std::optional<uint64_t>(2));
  CHECK(m->step == std::optional<uint64_t>(80));
  CHECK_FALSE(both.Match("run002-step80.ckp"));
  // The default reads any number of digits, as dlio always has: ckpt-1 is id 1.
  m = FolderNameTemplate().Match("ckpt-1");
  REQUIRE(m);
  CHECK(m->id == std::optional<uint64_t>(1));
  CHECK_FALSE(FolderNameTemplate().Match("ckpt-"));
}

TEST_CASE("folder_name: bad templates are refused with the key and the reason", "[checkpoint]") {
  const std::vector<std::pair<std::string, std::string>> bad{
      {"", "must not be empty"},
      {"a/{step}", "is not a folder name"},
      {".dlio{step}", "is not a folder name"},
      {"..", "is not a folder name"},
      {"global_step", "has no {id}, {step} or {epoch}"},
      {"global_{batch}", "unknown placeholder {batch}"},
      {"global_step{step", "without its '}'"},
      {"global_step}{step}", "without its '{'"},
      {"s{step}-{step}", "has {step} twice"},
      {"{id}{step}", "two placeholders with no text between them"},
      {"s{step}0", "a digit right after a placeholder"},
      {"i{id}_2{step}", ""},  // text between them that starts with '_': fine
      {"s{step:8}", "a width is '0' and 1 to 20 digits"},
      {"s{step:021}", "a width is '0' and 1 to 20 digits"},
      {"s{step:00}", "a width is '0' and 1 to 20 digits"},
      {"s{step:0x}", "a width is '0' and 1 to 20 digits"},
  };
  for (const auto& [text, why] : bad) {
    CAPTURE(text);
    auto t = FolderNameTemplate::Parse(text);
    if (why.empty()) {
      CHECK(t.ok());
      continue;
    }
    REQUIRE_FALSE(t.ok());
    CHECK(t.status().code() == StatusCode::kInvalidArgument);
    CHECK_THAT(t.status().message(), Catch::Contains("checkpoint.folder_name"));
    CHECK_THAT(t.status().message(), Catch::Contains(why));
  }
}

TEST_CASE("folder_name: the checkpointer refuses a bad template and a tag its folders would match",
          "[checkpoint]") {
  auto storage = MemoryStorage();
  CheckpointOptions options = DeepSpeedLike();
  options.folder_name = "global_step";
  auto made = Build(options, storage.get());
  REQUIRE_FALSE(made.ok());
  CHECK_THAT(made.status().message(), Catch::Contains("checkpoint.folder_name: 'global_step'"));

  options = DeepSpeedLike();
  options.tag_file = "global_step7";
  made = Build(options, storage.get());
  REQUIRE_FALSE(made.ok());
  CHECK_THAT(made.status().message(), Catch::Contains("checkpoint.tag_file: 'global_step7'"));
  CHECK_THAT(made.status().message(), Catch::Contains("global_step{step}"));

  // DLIO's own layout keeps DLIO's names.
  options = CheckpointOptions();
  options.name = "dlio_benchmark";
  options.folder = "ck";
  options.folder_name = "global_step{step}";
  made = Build(options, storage.get());
  REQUIRE_FALSE(made.ok());
  CHECK_THAT(made.status().message(), Catch::Contains("checkpoint.folder_name"));
  CHECK_THAT(made.status().message(), Catch::Contains("dlio_benchmark"));
  CHECK_FALSE(Exists(storage.get(), "ck"));
}

TEST_CASE("folder_name: every file checkpointer declares the check to the preflight",
          "[checkpoint]") {
  Registries registries;
  REQUIRE(RegisterBuiltinCheckpointers(&registries.checkpointers).ok());
  const auto check = [&](const std::string& type, const std::string& folder_name) {
    auto entry = registries.checkpointers.Find(type);
    REQUIRE(entry.ok());
    REQUIRE(entry->capabilities.check_options);
    CheckpointOptions options;
    options.name = type;
    options.folder_name = folder_name;
    return entry->capabilities.check_options(options);
  };
  for (const char* type : {"paper", "model", "transformer", "torch_save"}) {
    CAPTURE(type);
    CHECK(check(type, "global_step{step}").ok());
    CHECK_THAT(check(type, "global_step").message(), Catch::Contains("checkpoint.folder_name"));
  }
  CHECK(check("dlio_benchmark", checkpoint_internal::kDefaultFolderName).ok());
  CHECK_THAT(check("dlio_benchmark", "global_step{step}").message(),
             Catch::Contains("does not apply to checkpoint type 'dlio_benchmark'"));
}

TEST_CASE("folder_name: saves go to the template's folders and the tag names the newest",
          "[checkpoint]") {
  auto storage = MemoryStorage();
  auto ck = Make(DeepSpeedLike(), storage.get());
  auto first = ck->Save(1, 8);
  REQUIRE(first.ok());
  CHECK(first->id == 0);
  CHECK(first->step == 8);
  CHECK(first->files.at(0).path == "ck/global_step8/model-rank0.bin");
  CHECK(Content(storage.get(), "ck/latest") == "global_step8");
  auto second = ck->Save(1, 16);
  REQUIRE(second.ok());
  CHECK(second->id == 1);
  CHECK(second->step == 16);
  CHECK(Exists(storage.get(), "ck/global_step16/model-rank0.bin"));
  CHECK(Exists(storage.get(), "ck/global_step16/.dlio-complete-rank0"));
  // The tag is rewritten in place: 13 bytes now, none left of the shorter name before.
  CHECK(Content(storage.get(), "ck/latest") == "global_step16");
  CHECK_FALSE(Exists(storage.get(), "ck/ckpt-000000"));

  // The default writes dlio's ckpt-NNNNNN and a tag of that name, as before.
  CheckpointOptions plain = DeepSpeedLike();
  plain.folder = "plain";
  plain.folder_name = checkpoint_internal::kDefaultFolderName;
  auto own = Make(plain, storage.get());
  auto saved = own->Save(1, 8);
  REQUIRE(saved.ok());
  CHECK(saved->step == -1);
  CHECK(Exists(storage.get(), "plain/ckpt-000000/model-rank0.bin"));
  CHECK(Content(storage.get(), "plain/latest") == "ckpt-000000");
}

TEST_CASE("folder_name: a checkpointer built again finds the newest by step, not by name",
          "[checkpoint]") {
  auto storage = MemoryStorage();
  {
    auto ck = Make(DeepSpeedLike(), storage.get());
    for (int64_t step : {8, 16, 24, 96}) REQUIRE(ck->Save(1, step).ok());
  }
  // global_step96 torn (no manifest), and folders the template does not name.
  REQUIRE(storage->Remove("ck/global_step96/.dlio-complete-rank0").ok());
  REQUIRE(storage->CreateDirs("ck/global_stepX").ok());
  REQUIRE(storage->CreateDirs("ck/ckpt-000009").ok());

  auto again = Make(DeepSpeedLike(), storage.get());
  // Ids by step: 8, 16, 24, 96 (by name, global_step16 < global_step24 < global_step8 <
  // global_step96); the next save's id is one past them.
  CHECK(again->next_id() == 4);
  auto complete = again->CompleteIds();
  REQUIRE(complete.ok());
  CHECK(*complete == std::vector<uint64_t>{0, 1, 2});
  auto loaded = again->Load(complete->back());
  INFO(loaded.status().ToString());
  REQUIRE(loaded.ok());
  CHECK(loaded->step == 24);
  CHECK(loaded->bytes_read == 3000);
  CHECK(loaded->files.at(0).path == "ck/global_step24/model-rank0.bin");
  CHECK(again->Load(0)->files.at(0).path == "ck/global_step8/model-rank0.bin");
  auto missing = again->Load(7);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == StatusCode::kNotFound);
  CHECK_THAT(missing.status().message(), Catch::Contains("global_step{step}"));

  // The next save after step 32 takes id 4; a folder of an existing step is refused, not
  // overwritten.
  auto next = again->Save(1, 32);
  REQUIRE(next.ok());
  CHECK(next->id == 4);
  CHECK(Exists(storage.get(), "ck/global_step32/model-rank0.bin"));
  auto clash = again->Save(1, 16);
  REQUIRE_FALSE(clash.ok());
  CHECK(clash.status().code() == StatusCode::kAlreadyExists);
}

TEST_CASE("folder_name: with {id} in it ids come from the names, one past the highest next",
          "[checkpoint]") {
  auto storage = MemoryStorage();
  CheckpointOptions options = DeepSpeedLike();
  options.folder_name = "checkpoint_{id:03}";
  {
    auto ck = Make(options, storage.get());
    REQUIRE(ck->Save(1, 5)->files.at(0).path == "ck/checkpoint_000/model-rank0.bin");
  }
  REQUIRE(storage->CreateDirs("ck/checkpoint_41").ok());  // an id written without the padding
  auto again = Make(options, storage.get());
  CHECK(again->next_id() == 42);
  CHECK(*again->CompleteIds() == std::vector<uint64_t>{0});  // checkpoint_41 has no manifest
  auto saved = again->Save(1, 6);
  REQUIRE(saved.ok());
  CHECK(saved->id == 42);
  CHECK(saved->step == -1);
  CHECK(Exists(storage.get(), "ck/checkpoint_042/model-rank0.bin"));
  CHECK(Content(storage.get(), "ck/latest") == "checkpoint_042");
}

}  // namespace
}  // namespace dlio
