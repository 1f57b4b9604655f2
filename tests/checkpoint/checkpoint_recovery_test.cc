// Checkpoints after failures: a failed save removes what it made, a killed save leaves a torn
// checkpoint (and earlier versions' temporaries are removed, dead owners only), a read-only run
// loads the newest complete ones.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/owner_stamp.h"
#include "dead_owner.h"
#include "dlio/checkpointer.h"
#include "dlio/comm.h"
#include "dlio/registries.h"
#include "dlio/storage.h"
#include "hooked_storage.h"
#include "runner/checkpoint_select.h"
#include "test_util.h"

namespace dlio {
namespace {

namespace fs = std::filesystem;

using testing::HookedStorage;

std::unique_ptr<Storage> Posix() {
  auto storage = NewPosixStorage(StorageOptions{});
  storage->Bind(SystemClock(), nullptr);
  return storage;
}

std::unique_ptr<Checkpointer> Make(const CheckpointOptions& options, Storage* storage) {
  Registries registries;
  REQUIRE(RegisterBuiltinCheckpointers(&registries.checkpointers).ok());
  CheckpointEnv env;
  env.storage = storage;
  env.clock = SystemClock();
  auto made = (*registries.checkpointers.Get(options.name))(options, env);
  INFO(made.status().ToString());
  REQUIRE(made.ok());
  return std::move(made).value();
}

std::vector<std::string> Names(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

void Touch(const std::string& path, const std::string& text = "user data") {
  fs::create_directories(fs::path(path).parent_path());
  auto storage = Posix();
  REQUIRE(WriteFileAtomically(storage.get(), path, text).ok());
}

CheckpointOptions Paper(const std::string& folder) {
  CheckpointOptions options;
  options.folder = folder;  // paper: five files of one write each (transfer_size 4 MiB)
  return options;
}

TEST_CASE("a failed checkpoint save removes the files it wrote, and only those", "[checkpoint]") {
  testing::TempDir dir;
  // The fourth file's write fails (disk full): three files are already under their final names.
  HookedStorage storage(Posix(), [](int n, const std::string&, uint64_t) {
    return n == 4 ? Status::FromErrno(ENOSPC, "pwrite (injected)") : Status::OK();
  });
  auto checkpointer = Make(Paper(dir / "ck"), &storage);
  Touch(dir / "ck/ckpt-000000/rank1-model.bin");  // another rank's file in the same checkpoint
  auto failed = checkpointer->Save(0, 1);
  REQUIRE_FALSE(failed.ok());
  CHECK_THAT(failed.status().message(),
             Catch::Contains("rank0-optimizer.bin") && Catch::Contains("No space left on device"));
  CHECK(Names(dir / "ck/ckpt-000000") == std::vector<std::string>{"rank1-model.bin"});

  // Alone in the folder, the failed save removes the folder it created too.
  HookedStorage alone(Posix(), [](int n, const std::string&, uint64_t) {
    return n == 2 ? Status::IOError("injected") : Status::OK();
  });
  auto second = Make(Paper(dir / "ck2"), &alone);
  REQUIRE_FALSE(second->Save(0, 1).ok());
  CHECK(Names(dir / "ck2").empty());
  auto third = second->Save(0, 2);  // the next save works, under the next id
  REQUIRE(third.ok());
  CHECK(third->id == 1);
  CHECK(*second->CompleteIds() == std::vector<uint64_t>{1});
}

TEST_CASE("a failed read_back removes the checkpoint it just wrote", "[checkpoint]") {
  testing::TempDir dir;
  CheckpointOptions options = Paper(dir / "ck");
  options.read_back = true;
  HookedStorage storage(Posix(), [](int, const std::string&, uint64_t) { return Status::OK(); });
  storage.corrupt_reads = true;  // what read_back reads differs from what was written
  auto failed = Make(options, &storage)->Save(0, 1);
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.status().code() == StatusCode::kCorruption);
  CHECK(Names(dir / "ck").empty());
}

// Checkpoints are written in place (as torch.save and DLIO write them), so a killed save leaves a
// short file under its final name and no manifest; temporaries come only from earlier dlio
// versions, which wrote checkpoints through a temporary name, and are still cleaned up.
TEST_CASE("a killed save leaves a torn checkpoint, dead owners' temporaries are removed",
          "[checkpoint]") {
  testing::TempDir dir;
  {
    auto storage = Posix();
    REQUIRE(Make(Paper(dir / "ck"), storage.get())->Save(0, 1).ok());  // ckpt-000000, complete
  }
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {  // SIGKILL while writing the fourth file of ckpt-000001
    HookedStorage storage(Posix(), [](int n, const std::string&, uint64_t) {
      if (n == 4) ::raise(SIGKILL);
      return Status::OK();
    });
    (void)Make(Paper(dir / "ck"), &storage)->Save(0, 2);
    ::_exit(0);
  }
  int wstatus = 0;
  REQUIRE(::waitpid(child, &wstatus, 0) == child);
  REQUIRE(WIFSIGNALED(wstatus));
  const std::string torn = dir / "ck/ckpt-000001";
  std::vector<std::string> left = Names(torn);
  // Three files and the optimizer's, created under its final name and killed before its write.
  REQUIRE(left == std::vector<std::string>{"rank0-index-a.bin", "rank0-index-b.bin",
                                           "rank0-meta.bin", "rank0-optimizer.bin"});
  CHECK(fs::file_size(torn + "/rank0-optimizer.bin") == 0);
  const std::string killed = torn + "/rank0-optimizer.bin.tmp-" + testing::DeadOwnerToken();

  // What is not provably a dead dlio process's temporary stays: a live owner's, a name without
  // an owner token, earlier dlio versions' ".tmp", and anything outside ckpt-NNNNNN folders.
  const std::string live = torn + "/rank0-model.bin.tmp-" + UniqueOwnerToken();
  const std::string old_style = torn + "/rank0-model.bin.tmp";
  const std::string no_token = torn + "/notes.tmp-mine";
  const std::string outside = dir / "ck/other/x.bin.tmp-" + testing::DeadOwnerToken();
  const std::string dead = dir / "ck/ckpt-000000/rank0-meta.bin.tmp-" + testing::DeadOwnerToken();
  for (const auto& p : {killed, live, old_style, no_token, outside, dead}) Touch(p);

  auto storage = Posix();
  auto next = Make(Paper(dir / "ck"), storage.get());
  CHECK_FALSE(fs::exists(killed));
  CHECK_FALSE(fs::exists(dead));
  CHECK(fs::exists(torn + "/rank0-optimizer.bin"));
  for (const auto& p : {live, old_style, no_token, outside}) {
    CAPTURE(p);
    CHECK(fs::exists(p));
  }
  // The torn checkpoint keeps its files (final names are never removed by another run) but is
  // not complete; the next save goes past it.
  CHECK(*next->CompleteIds() == std::vector<uint64_t>{0});
  CHECK(next->next_id() == 2);
}

TEST_CASE("a read-only run loads the newest complete checkpoints, never a torn one",
          "[checkpoint]") {
  testing::TempDir dir;
  auto storage = Posix();
  {
    auto writer = Make(Paper(dir / "ck"), storage.get());
    for (int i = 0; i < 3; ++i) REQUIRE(writer->Save(0, i).ok());
  }
  // ckpt-000002 torn: no manifest (killed before it); ckpt-000003: a folder without files.
  fs::remove(dir / "ck/ckpt-000002/.dlio-complete-rank0");
  fs::create_directories(dir / "ck/ckpt-000003");
  auto reader = Make(Paper(dir / "ck"), storage.get());
  CHECK(*reader->CompleteIds() == std::vector<uint64_t>{0, 1});
  auto comm = MakeSerialComm();
  auto newest = runner_internal::NewestCompleteCheckpoints(reader.get(), comm.get(), 1, "ck");
  REQUIRE(newest.ok());
  CHECK(*newest == std::vector<uint64_t>{1});
  REQUIRE(reader->Load(1).ok());
  auto two = runner_internal::NewestCompleteCheckpoints(reader.get(), comm.get(), 2, "ck");
  REQUIRE(two.ok());
  CHECK(*two == std::vector<uint64_t>{0, 1});
  auto three = runner_internal::NewestCompleteCheckpoints(reader.get(), comm.get(), 3, "ck");
  REQUIRE_FALSE(three.ok());
  CHECK(three.status().code() == StatusCode::kNotFound);
  CHECK_THAT(three.status().message(), Catch::Contains("checkpoint.num_checkpoints_read is 3") &&
                                           Catch::Contains("holds 2 complete checkpoint"));

  // A manifest that does not match the files (a file cut short) is not complete either.
  fs::resize_file(dir / "ck/ckpt-000001/rank0-meta.bin", 10);
  CHECK(*reader->CompleteIds() == std::vector<uint64_t>{0});
}

}  // namespace
}  // namespace dlio
