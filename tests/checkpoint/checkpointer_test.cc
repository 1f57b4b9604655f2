#include "dlio/checkpointer.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "checkpoint/model_checkpoint_options.h"
#include "dlio/registries.h"
#include "dlio/storage.h"
#include "dlio/tracer.h"
#include "hooked_storage.h"
#include "test_util.h"

namespace dlio {
namespace {

std::unique_ptr<Storage> MemoryStorage() {
  auto storage = NewMemoryStorage();
  storage->Bind(SystemClock(), nullptr);
  return storage;
}

std::unique_ptr<Checkpointer> Make(const CheckpointOptions& options, Storage* storage,
                                   Tracer* tracer = nullptr) {
  Registries registries;
  REQUIRE(RegisterBuiltinCheckpointers(&registries.checkpointers).ok());
  auto factory = registries.checkpointers.Get(options.name);
  REQUIRE(factory.ok());
  CheckpointEnv env;
  env.storage = storage;
  env.clock = SystemClock();
  env.tracer = tracer;
  auto made = (*factory)(options, env);
  INFO(made.status().ToString());
  REQUIRE(made.ok());
  return std::move(made).value();
}

uint64_t SizeOf(Storage* storage, const std::string& path) {
  auto size = storage->FileSize(path);
  INFO(path << ": " << size.status().ToString());
  REQUIRE(size.ok());
  return *size;
}

bool ExistsIn(Storage* storage, const std::string& path) {
  auto exists = storage->Exists(path);
  REQUIRE(exists.ok());
  return *exists;
}

std::vector<std::string> ListOf(Storage* storage, const std::string& dir) {
  auto names = storage->List(dir);
  INFO(dir << ": " << names.status().ToString());
  REQUIRE(names.ok());
  return *names;
}

TEST_CASE("paper checkpoint writes the five files of the paper's sizes", "[checkpoint]") {
  auto storage = MemoryStorage();
  CheckpointOptions options;
  options.folder = "ckpt/";
  options.transfer_size = 3000;  // not a divisor of any size: exercises the last short request
  auto checkpointer = Make(options, storage.get());
  auto result = checkpointer->Save(2, 40);
  INFO(result.status().ToString());
  REQUIRE(result.ok());
  CHECK(result->id == 0);
  CHECK(result->bytes_written == 1024 + 1024 + 4096 + 65536 + 4194304);
  REQUIRE(result->files.size() == 5);
  std::vector<uint64_t> sizes;
  for (const auto& f : result->files) {
    CHECK(f.path.rfind("ckpt/ckpt-000000/rank0-", 0) == 0);
    CHECK(SizeOf(storage.get(), f.path) == f.bytes);
    sizes.push_back(f.bytes);
  }
  CHECK(sizes == std::vector<uint64_t>{1024, 1024, 4096, 65536, 4194304});
  // The manifest, written last, marks rank 0's share complete.
  CHECK(ListOf(storage.get(), "ckpt/ckpt-000000") ==
        std::vector<std::string>{".dlio-complete-rank0", "rank0-index-a.bin", "rank0-index-b.bin",
                                 "rank0-meta.bin", "rank0-model.bin", "rank0-optimizer.bin"});
  CHECK(SizeOf(storage.get(), "ckpt/ckpt-000000/.dlio-complete-rank0") == 0);
  const uint64_t expected_writes = 1 + 1 + 2 + 22 + 1399;  // ceil(size / 3000) per file
  CHECK(storage->stats().write_ops == expected_writes);
  CHECK(storage->stats().write_bytes == result->bytes_written);
  CHECK(storage->stats().syncs == 0);
  CHECK(result->write_ns > 0);
  CHECK(result->bytes_read == 0);
}

TEST_CASE("model checkpoint split over ranks sums exactly to the model size", "[checkpoint]") {
  const uint64_t total = 1000003;  // prime: indivisible by every world size below
  for (int world = 1; world <= 5; ++world) {
    auto storage = MemoryStorage();
    uint64_t sum = 0;
    // As in a real run, every rank builds its checkpointer before any rank saves.
    std::vector<std::unique_ptr<Checkpointer>> ranks;
    for (int rank = 0; rank < world; ++rank) {
      CheckpointOptions options;
      options.name = "model";
      options.folder = "ck";
      options.model_size_bytes = total;
      options.world = world;
      options.rank = rank;
      options.transfer_size = 65536;
      ranks.push_back(Make(options, storage.get()));
    }
    for (int rank = 0; rank < world; ++rank) {
      auto result = ranks[rank]->Save(0, 0);
      REQUIRE(result.ok());
      REQUIRE(result->files.size() == 1);
      const std::string path = "ck/ckpt-000000/model-rank" + std::to_string(rank) + ".bin";
      CHECK(result->files[0].path == path);
      const uint64_t expected =
          total / world + (static_cast<uint64_t>(rank) < total % world ? 1 : 0);
      CHECK(SizeOf(storage.get(), path) == expected);
      sum += SizeOf(storage.get(), path);
    }
    INFO("world " << world);
    CHECK(sum == total);
  }
}

TEST_CASE("model checkpoint: ranks with no bytes write nothing, root_only puts all on rank 0",
          "[checkpoint]") {
  auto storage = MemoryStorage();
  CheckpointOptions options;
  options.name = "model";
  options.folder = "ck";
  options.model_size_bytes = 3;
  options.world = 5;
  std::vector<std::unique_ptr<Checkpointer>> ranks;
  for (int rank = 0; rank < 5; ++rank) {
    options.rank = rank;
    ranks.push_back(Make(options, storage.get()));
  }
  for (int rank = 0; rank < 5; ++rank) {
    auto result = ranks[rank]->Save(0, 0);
    REQUIRE(result.ok());
    CHECK(result->files.size() == (rank < 3 ? 1u : 0u));
    CHECK(result->bytes_written == (rank < 3 ? 1u : 0u));
  }
  CHECK(ListOf(storage.get(), "ck/ckpt-000000").size() == 3 + 3);  // files and manifests
  // Every rank holds its share of checkpoint 0, the ones without files too.
  for (auto& rank : ranks) CHECK(*rank->CompleteIds() == std::vector<uint64_t>{0});

  auto root_storage = MemoryStorage();
  options.model_size_bytes = 10000;
  options.root_only = true;
  options.world = 3;
  options.rank = 1;
  auto other = Make(options, root_storage.get())->Save(0, 0);
  REQUIRE(other.ok());
  CHECK(other->files.empty());
  CHECK(root_storage->stats().opens == 0);
  CHECK_FALSE(ExistsIn(root_storage.get(), "ck"));
  options.rank = 0;
  auto root = Make(options, root_storage.get())->Save(0, 0);
  REQUIRE(root.ok());
  REQUIRE(root->files.size() == 1);
  CHECK(SizeOf(root_storage.get(), "ck/ckpt-000000/model-rank0.bin") == 10000);
}

TEST_CASE("a failed write leaves neither a final-named file nor a .tmp", "[checkpoint]") {
  testing::HookedStorage storage(
      NewMemoryStorage(), [](int n, const std::string& path, uint64_t offset) {
        return n == 3 ? Status::IOError("write ", path, " at offset ", offset, ": injected failure")
                      : Status::OK();
      });
  CheckpointOptions options;
  options.name = "model";
  options.folder = "ck";
  options.model_size_bytes = 5000;
  options.transfer_size = 1000;
  auto checkpointer = Make(options, &storage);
  auto result = checkpointer->Save(1, 7);
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == StatusCode::kIOError);
  CHECK(result.status().message().find("ck/ckpt-000000/model-rank0.bin") != std::string::npos);
  CHECK(result.status().message().find("injected failure") != std::string::npos);
  CHECK_FALSE(ExistsIn(&storage, "ck/ckpt-000000/model-rank0.bin"));
  CHECK_FALSE(ExistsIn(&storage, "ck/ckpt-000000"));  // the save made it and removed it again

  // The next save uses a fresh id and succeeds (the 3rd write has passed).
  auto again = checkpointer->Save(1, 8);
  INFO(again.status().ToString());
  REQUIRE(again.ok());
  CHECK(again->id == 1);
  CHECK(SizeOf(&storage, "ck/ckpt-000001/model-rank0.bin") == 5000);
}

TEST_CASE("fsync syncs every file and the folders, read_back reads every byte", "[checkpoint]") {
  auto storage = MemoryStorage();
  CheckpointOptions options;
  options.folder = "ck";
  options.fsync = true;
  options.read_back = true;
  options.transfer_size = 1 << 20;
  auto result = Make(options, storage.get())->Save(0, 0);
  INFO(result.status().ToString());
  REQUIRE(result.ok());
  CHECK(storage->stats().syncs >= 5);  // one per file (+ the directory syncs, if counted)
  CHECK(result->bytes_read == result->bytes_written);
  CHECK(storage->stats().read_bytes == result->bytes_written);
  CHECK(storage->stats().read_ops == 1 + 1 + 1 + 1 + 4);
  CHECK(result->read_ns > 0);
}

TEST_CASE("an existing foreign file at a final path is refused and kept", "[checkpoint]") {
  auto storage = MemoryStorage();
  CheckpointOptions options;
  options.folder = "ck";
  auto checkpointer = Make(options, storage.get());
  REQUIRE(storage->CreateDirs("ck/ckpt-000000").ok());
  {
    auto file = storage->Open("ck/ckpt-000000/rank0-meta.bin", OpenMode::kCreateNew);
    REQUIRE(file.ok());
    REQUIRE((*file)->WriteAt(0, "precious", 8).ok());
    REQUIRE((*file)->Close().ok());
  }
  auto result = checkpointer->Save(0, 0);
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == StatusCode::kAlreadyExists);
  CHECK(result.status().message().find("ck/ckpt-000000/rank0-meta.bin") != std::string::npos);
  CHECK(SizeOf(storage.get(), "ck/ckpt-000000/rank0-meta.bin") == 8);
  CHECK(ListOf(storage.get(), "ck/ckpt-000000") == std::vector<std::string>{"rank0-meta.bin"});
}

// torch.save and DLIO's pytorch checkpointing open the final name and write it: no temporary
// name and no rename (on a parallel file system each would be an extra create and rename).
TEST_CASE("checkpoint files are written in place under their final names", "[checkpoint]") {
  testing::HookedStorage storage(NewMemoryStorage(),
                                 [](int, const std::string&, uint64_t) { return Status::OK(); });
  CheckpointOptions options;
  options.folder = "ck";
  REQUIRE(Make(options, &storage)->Save(0, 0).ok());
  CHECK(storage.calls == std::vector<std::string>{
                             "create ck/ckpt-000000/rank0-index-a.bin",
                             "create ck/ckpt-000000/rank0-index-b.bin",
                             "create ck/ckpt-000000/rank0-meta.bin",
                             "create ck/ckpt-000000/rank0-optimizer.bin",
                             "create ck/ckpt-000000/rank0-model.bin",
                             "create ck/ckpt-000000/.dlio-complete-rank0",
                         });

  // DLIO's layout: a rerun of the same save truncates its earlier run's file, as DLIO does.
  options.name = "dlio_benchmark";
  options.framework = "pytorch";
  options.model_size_bytes = 3000;
  for (const char* how : {"create", "truncate"}) {
    storage.calls.clear();
    REQUIRE(Make(options, &storage)->Save(1, 4).ok());
    CHECK(storage.calls ==
          std::vector<std::string>{std::string(how) + " ck/global_epoch1_step4/model_states-0.pt"});
  }
}

// TensorFlow's BundleWriter writes each file under a temporary name and renames it into place, so
// DLIO's tensorflow files keep that path.
TEST_CASE("DLIO's tensorflow checkpoint files go through a temporary name", "[checkpoint]") {
  testing::HookedStorage storage(NewMemoryStorage(),
                                 [](int, const std::string&, uint64_t) { return Status::OK(); });
  CheckpointOptions options;
  options.name = "dlio_benchmark";
  options.framework = "tensorflow";
  options.folder = "ck";
  options.model_size_bytes = 3000;
  REQUIRE(Make(options, &storage)->Save(1, 4).ok());
  const std::string dir = "ck/global_epoch1_step4/";
  const std::vector<std::string> finals = {dir + "model_states-0.pb-1.index",
                                           dir + "model_states-0.pb-1.data-00000-of-00001",
                                           dir + "checkpoint"};
  REQUIRE(storage.calls.size() == 2 * finals.size());
  for (size_t i = 0; i < finals.size(); ++i) {
    const std::string tmp = finals[i] + kAtomicTmpInfix;
    CHECK(storage.calls[2 * i].rfind("create " + tmp, 0) == 0);
    CHECK(storage.calls[2 * i + 1].rfind("rename " + tmp, 0) == 0);
    CHECK_THAT(storage.calls[2 * i + 1], Catch::EndsWith(" -> " + finals[i]));
  }
}

TEST_CASE("ids count up and a new checkpointer continues after existing checkpoints",
          "[checkpoint]") {
  auto storage = MemoryStorage();
  CheckpointOptions options;
  options.name = "model";
  options.folder = "ck";
  options.model_size_bytes = 4096;
  options.transfer_size = 1000;
  options.seed = 9;
  auto first = Make(options, storage.get());
  REQUIRE(first->Save(0, 10)->id == 0);
  REQUIRE(first->Save(0, 20)->id == 1);
  REQUIRE(storage->CreateDirs("ck/unrelated").ok());

  auto second = Make(options, storage.get());
  auto third = second->Save(1, 0);
  REQUIRE(third.ok());
  CHECK(third->id == 2);
  CHECK(ListOf(storage.get(), "ck") ==
        std::vector<std::string>{"ckpt-000000", "ckpt-000001", "ckpt-000002", "unrelated"});

  // Load verifies size and content of an earlier checkpoint.
  auto loaded = second->Load(1);
  INFO(loaded.status().ToString());
  REQUIRE(loaded.ok());
  CHECK(loaded->bytes_read == 4096);
  CHECK(loaded->files.size() == 1);

  // Flip one byte of checkpoint 1: Load names the file and offset.
  {
    auto file = storage->Open("ck/ckpt-000001/model-rank0.bin", OpenMode::kReadWrite);
    REQUIRE(file.ok());
    uint8_t byte = 0;
    REQUIRE((*file)->ReadExactAt(2500, 1, &byte).ok());
    byte ^= 0xff;
    REQUIRE((*file)->WriteAt(2500, &byte, 1).ok());
  }
  auto corrupt = second->Load(1);
  REQUIRE_FALSE(corrupt.ok());
  CHECK(corrupt.status().code() == StatusCode::kCorruption);
  CHECK(corrupt.status().message().find("ck/ckpt-000001/model-rank0.bin") != std::string::npos);
  CHECK(corrupt.status().message().find("offset 2500") != std::string::npos);

  auto missing = second->Load(7);
  CHECK_FALSE(missing.ok());
}

TEST_CASE("checkpoint on posix storage: files on disk, no .tmp, trace events", "[checkpoint]") {
  testing::TempDir dir;
  auto storage = NewPosixStorage(StorageOptions{});
  MemoryTracer tracer;
  storage->Bind(SystemClock(), &tracer);
  CheckpointOptions options;
  options.folder = dir / "checkpoints";
  options.fsync = true;
  options.read_back = true;
  auto checkpointer = Make(options, storage.get(), &tracer);
  auto result = checkpointer->Save(3, 150);
  INFO(result.status().ToString());
  REQUIRE(result.ok());
  namespace fs = std::filesystem;
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir / "checkpoints/ckpt-000000")) {
    names.push_back(entry.path().filename().string());
    CHECK(entry.path().filename().string().find(".tmp") == std::string::npos);
  }
  CHECK(names.size() == 5 + 1);  // the files and the manifest
  CHECK(fs::file_size(dir / "checkpoints/ckpt-000000/rank0-model.bin") == 4194304);
  CHECK(fs::file_size(dir / "checkpoints/ckpt-000000/rank0-index-a.bin") == 1024);
  REQUIRE(checkpointer->Load(0).ok());

  int captures = 0, restarts = 0;
  for (const auto& e : tracer.Events()) {
    if (std::string(e.name) == "capture") {
      ++captures;
      CHECK(std::string(e.cat) == "checkpoint");
      CHECK(e.index == 0);
      CHECK(e.epoch == 3);
      CHECK(e.step == 150);
      CHECK(e.count == static_cast<int64_t>(result->bytes_written));
    }
    if (std::string(e.name) == "restart") ++restarts;
  }
  CHECK(captures == 1);
  CHECK(restarts == 1);
}

TEST_CASE("model_files splits a root checkpoint into files written by one fwrite each",
          "[checkpoint]") {
  testing::TempDir dir;
  auto storage = NewStdioStorage();
  MemoryTracer tracer;
  storage->Bind(SystemClock(), &tracer);
  CheckpointOptions options;
  options.name = "model";
  options.folder = dir / "ck";
  options.model_size_bytes = 4 * 1000003 + 2;  // parts of 1000004, 1000004, 1000003, 1000003
  options.sections.Get<ModelCheckpointOptions>().model_files = 4;
  options.transfer_size = 2 << 20;  // larger than any file: one request per file
  options.root_only = true;
  options.read_back = true;
  auto result = Make(options, storage.get(), &tracer)->Save(0, 50);
  INFO(result.status().ToString());
  REQUIRE(result.ok());
  REQUIRE(result->files.size() == 4);
  CHECK(result->bytes_written == options.model_size_bytes);
  CHECK(SizeOf(storage.get(), dir / "ck/ckpt-000000/model-rank0-1of4.bin") == 1000004);
  CHECK(SizeOf(storage.get(), dir / "ck/ckpt-000000/model-rank0-4of4.bin") == 1000003);
  int fwrites = 0, freads = 0;
  for (const auto& e : tracer.Events()) {
    const std::string name = e.name;
    if (name == "fwrite") {
      ++fwrites;
      CHECK(std::string(e.cat) == "STDIO");
      CHECK(e.offset == 0);
      CHECK(e.count >= 1000003);
    }
    if (name == "fread") ++freads;
  }
  CHECK(fwrites == 4);
  CHECK(freads == 4);

  options.sections.Get<ModelCheckpointOptions>().model_files = 0;
  Registries registries;
  REQUIRE(RegisterBuiltinCheckpointers(&registries.checkpointers).ok());
  CheckpointEnv env;
  env.storage = storage.get();
  auto bad = (*registries.checkpointers.Get("model"))(options, env);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("checkpoint.model_files") != std::string::npos);
}

TEST_CASE("checkpointer factories reject bad options naming the key", "[checkpoint]") {
  auto storage = MemoryStorage();
  Registries registries;
  REQUIRE(RegisterBuiltinCheckpointers(&registries.checkpointers).ok());
  CheckpointEnv env;
  env.storage = storage.get();
  CheckpointOptions options;
  options.name = "model";
  auto no_size = (*registries.checkpointers.Get("model"))(options, env);
  REQUIRE_FALSE(no_size.ok());
  CHECK(no_size.status().message().find("checkpoint.model_size_bytes") != std::string::npos);
  options.transfer_size = 0;
  auto no_transfer = (*registries.checkpointers.Get("paper"))(options, env);
  REQUIRE_FALSE(no_transfer.ok());
  CHECK(no_transfer.status().message().find("checkpoint.transfer_size") != std::string::npos);
  options.transfer_size = 1024;
  options.rank = 2;
  options.world = 2;
  CHECK((*registries.checkpointers.Get("paper"))(options, env).status().code() ==
        StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dlio
