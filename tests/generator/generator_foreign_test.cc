// GenerateDataset never adopts, overwrites or deletes what it did not create: foreign folders and
// files, user files at dlio's names, leftover staging folders, changed parameters, bad prefixes.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "dlio/generator.h"
#include "dlio/storage.h"
#include "generator/generator_test_util.h"
#include "test_util.h"

namespace dlio {
namespace {

using generator_testing::MemoryStorage;
using generator_testing::RawFormat;
using generator_testing::SmallDataset;

TEST_CASE("a changed parameter is refused naming the key", "[generator]") {
  auto storage = MemoryStorage();
  RawFormat format(false);
  DatasetConfig d = SmallDataset("ds");
  REQUIRE(GenerateDataset(d, format, FormatOptions{}, storage.get(), GenerateOptions{}).ok());
  d.record_length_bytes = 2048;
  auto r = GenerateDataset(d, format, FormatOptions{}, storage.get(), GenerateOptions{});
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kFailedPrecondition);
  CHECK(r.status().message().find(
            "dataset.record_length_bytes: existing dataset in ds has 1024, config asks 2048") == 0);
  d.record_length_bytes = 1024;
  GenerateOptions other_seed;
  other_seed.seed = 7;
  auto s = GenerateDataset(d, format, FormatOptions{}, storage.get(), other_seed);
  REQUIRE_FALSE(s.ok());
  CHECK(s.status().message().find("train.seed") == 0);
  // A knob without effect (compression level without compression) is not a difference.
  d.compression_level = 9;
  CHECK(GenerateDataset(d, format, FormatOptions{}, storage.get(), GenerateOptions{}).ok());
}

TEST_CASE("a foreign non-empty folder is refused, force never touches foreign files",
          "[generator]") {
  testing::TempDir dir;
  namespace fs = std::filesystem;
  const std::string folder = dir / "data";
  fs::create_directories(folder + "/train");
  testing::WriteTextFile(folder + "/notes.txt", "mine");
  testing::WriteTextFile(folder + "/train/img_1_of_5.raw", "abc");  // our name, foreign content
  auto storage = NewPosixStorage(StorageOptions{});
  RawFormat format(false);
  const DatasetConfig d = SmallDataset(folder);

  auto refused = GenerateDataset(d, format, FormatOptions{}, storage.get(), GenerateOptions{});
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == StatusCode::kAlreadyExists);
  CHECK(refused.status().message().find(folder) != std::string::npos);
  CHECK_FALSE(fs::exists(folder + "/.dlio-dataset.json"));
  CHECK_FALSE(fs::exists(folder + "/.dlio-generate.lock"));
  CHECK(format.writes == 0);

  GenerateOptions force;
  force.force = true;
  auto forced = GenerateDataset(d, format, FormatOptions{}, storage.get(), force);
  REQUIRE_FALSE(forced.ok());  // img_1_of_5.raw is not dlio's
  CHECK(forced.status().code() == StatusCode::kAlreadyExists);
  CHECK(forced.status().message().find(folder + "/train/img_1_of_5.raw") != std::string::npos);
  CHECK(testing::ReadTextFile(folder + "/train/img_1_of_5.raw") == "abc");
  CHECK(testing::ReadTextFile(folder + "/notes.txt") == "mine");
  CHECK_FALSE(fs::exists(folder + "/.dlio-dataset.json"));  // refused before writing anything
  CHECK(format.writes == 0);

  // Without the foreign file at a dataset name, the forced run completes beside notes.txt.
  fs::remove(folder + "/train/img_1_of_5.raw");
  auto done = GenerateDataset(d, format, FormatOptions{}, storage.get(), force);
  INFO(done.status().ToString());
  REQUIRE(done.ok());
  CHECK(done->files_written == 7);
  CHECK(testing::ReadTextFile(folder + "/notes.txt") == "mine");
  CHECK(fs::file_size(folder + "/train/img_1_of_5.raw") == 8 + 3 * 1024);
}

TEST_CASE("force never adopts a user's file at a dataset name, whatever its size", "[generator]") {
  testing::TempDir dir;
  namespace fs = std::filesystem;
  const std::string folder = dir / "data";
  fs::create_directories(folder + "/valid");
  const std::string theirs(100000, 'u');  // larger than the payload: plausible by size
  testing::WriteTextFile(folder + "/valid/img_0_of_2.raw", theirs);
  testing::WriteTextFile(folder + "/valid/img_1_of_2.raw.idx", "their index");  // a companion name
  auto storage = NewPosixStorage(StorageOptions{});
  RawFormat format(false);
  format.companion = true;
  GenerateOptions force;
  force.force = true;
  auto r = GenerateDataset(SmallDataset(folder), format, FormatOptions{}, storage.get(), force);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kAlreadyExists);
  CHECK(r.status().message().find(folder + "/valid/img_0_of_2.raw") != std::string::npos);
  CHECK(format.writes == 0);
  CHECK_FALSE(fs::exists(folder + "/.dlio-dataset.json"));
  CHECK(testing::ReadTextFile(folder + "/valid/img_0_of_2.raw") == theirs);

  fs::remove(folder + "/valid/img_0_of_2.raw");  // the companion name still blocks
  auto again = GenerateDataset(SmallDataset(folder), format, FormatOptions{}, storage.get(), force);
  REQUIRE_FALSE(again.ok());
  CHECK(again.status().message().find(folder + "/valid/img_1_of_2.raw.idx") != std::string::npos);
  CHECK(testing::ReadTextFile(folder + "/valid/img_1_of_2.raw.idx") == "their index");
  CHECK(format.writes == 0);
}

TEST_CASE("a staging folder in a forced foreign folder is left alone", "[generator]") {
  testing::TempDir dir;
  namespace fs = std::filesystem;
  const std::string folder = dir / "data";
  fs::create_directories(folder + "/valid/.dlio-tmp-rank0");
  testing::WriteTextFile(folder + "/valid/.dlio-tmp-rank0/img_0_of_2.raw", "theirs");
  auto storage = NewPosixStorage(StorageOptions{});
  RawFormat format(false);
  GenerateOptions force;
  force.force = true;
  auto r = GenerateDataset(SmallDataset(folder), format, FormatOptions{}, storage.get(), force);
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  CHECK(r->files_written == 7);
  CHECK(testing::ReadTextFile(folder + "/valid/.dlio-tmp-rank0/img_0_of_2.raw") == "theirs");
  REQUIRE(r->warnings.size() == 1);
  CHECK(r->warnings[0].find(folder + "/valid/.dlio-tmp-rank0") != std::string::npos);
}

TEST_CASE("files inside a leftover staging folder are never deleted", "[generator]") {
  auto storage = MemoryStorage();
  RawFormat format(true);
  const DatasetConfig d = SmallDataset("ds");
  REQUIRE(GenerateDataset(d, format, FormatOptions{}, storage.get(), GenerateOptions{}).ok());
  REQUIRE(storage->Remove("ds/train/img_3_of_5.raw").ok());
  // What a crashed run leaves looks like what a user may have put there: both stay.
  for (const char* path : {"ds/train/.dlio-tmp-rank0/img_3_of_5.raw",
                           "ds/train/.dlio-tmp-rank0-123-abc/img_3_of_5.raw"}) {
    auto f = storage->Open(path, OpenMode::kCreateNew);
    REQUIRE(f.ok());
    REQUIRE((*f)->WriteAt(0, "half", 4).ok());
  }
  auto r = GenerateDataset(d, format, FormatOptions{}, storage.get(), GenerateOptions{});
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  CHECK(r->files_written == 1);
  CHECK(r->files_skipped == 6);
  CHECK(*storage->FileSize("ds/train/.dlio-tmp-rank0/img_3_of_5.raw") == 4);
  CHECK(*storage->FileSize("ds/train/.dlio-tmp-rank0-123-abc/img_3_of_5.raw") == 4);
  CHECK(r->warnings.size() == 2);
  auto spec = DatasetFileSpec(d, format, Split::kTrain, 3, GenerateOptions{}.seed);
  uint64_t payload = 8;
  for (auto s : spec.sample_sizes) payload += s;
  CHECK(*storage->FileSize("ds/train/img_3_of_5.raw") == payload);
}

TEST_CASE("a dangling symbolic link at a dataset name is left alone", "[generator]") {
  testing::TempDir dir;
  namespace fs = std::filesystem;
  auto storage = NewPosixStorage(StorageOptions{});
  RawFormat format(false);
  format.companion = true;
  const DatasetConfig d = SmallDataset(dir / "data");
  REQUIRE(GenerateDataset(d, format, FormatOptions{}, storage.get(), GenerateOptions{}).ok());
  for (const std::string name : {"img_1_of_5.raw", "img_1_of_5.raw.idx"}) {
    CAPTURE(name);
    const std::string link = dir / ("data/train/" + name);
    fs::remove(dir / "data/train/img_1_of_5.raw");
    fs::remove(dir / "data/train/img_1_of_5.raw.idx");
    fs::create_symlink(dir / "elsewhere/not-mounted", link);
    auto r = GenerateDataset(d, format, FormatOptions{}, storage.get(), GenerateOptions{});
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == StatusCode::kAlreadyExists);
    CHECK(r.status().message().find(link) != std::string::npos);
    CHECK(fs::is_symlink(link));
    CHECK(fs::read_symlink(link) == dir / "elsewhere/not-mounted");
    fs::remove(link);
  }
}

TEST_CASE("a user's .dlio-dataset.json.tmp is neither overwritten nor renamed", "[generator]") {
  testing::TempDir dir;
  namespace fs = std::filesystem;
  fs::create_directories(dir / "data");
  testing::WriteTextFile(dir / "data/.dlio-dataset.json.tmp", "my notes");
  auto storage = NewPosixStorage(StorageOptions{});
  RawFormat format(false);
  const DatasetConfig d = SmallDataset(dir / "data");
  auto r = GenerateDataset(d, format, FormatOptions{}, storage.get(), GenerateOptions{});
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  CHECK(testing::ReadTextFile(dir / "data/.dlio-dataset.json.tmp") == "my notes");
  REQUIRE(r->warnings.size() == 1);  // reported, as a leftover of an earlier run would be
  CHECK(r->warnings[0].find(dir / "data/.dlio-dataset.json.tmp ") != std::string::npos);
  CHECK(testing::ReadTextFile(DatasetMarkerPath(d)).find("\"version\": 1") != std::string::npos);
  // No other temporary marker is left behind.
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir / "data")) {
    names.push_back(e.path().filename());
  }
  std::sort(names.begin(), names.end());
  CHECK(names ==
        std::vector<std::string>{".dlio-dataset.json", ".dlio-dataset.json.tmp", "train", "valid"});
}

TEST_CASE("a file_prefix that is not a plain name part is refused naming the key", "[generator]") {
  testing::TempDir dir;
  namespace fs = std::filesystem;
  auto storage = NewPosixStorage(StorageOptions{});
  RawFormat format(false);
  for (const std::string prefix : {"../..", "a/b", "/abs", ".dlio-tmp-rank0"}) {
    CAPTURE(prefix);
    DatasetConfig d = SmallDataset(dir / "deep/data");
    d.file_prefix = prefix;
    auto r = GenerateDataset(d, format, FormatOptions{}, storage.get(), GenerateOptions{});
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == StatusCode::kInvalidArgument);
    CHECK(r.status().message().find("dataset.file_prefix") == 0);
  }
  CHECK(format.writes == 0);
  CHECK_FALSE(fs::exists(dir / "deep"));
}

}  // namespace
}  // namespace dlio
