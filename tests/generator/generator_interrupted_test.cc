// GenerateDataset after a failed write or a kill: a file and its companions are one unit, and a
// rerun completes the dataset.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <csignal>
#include <filesystem>
#include <string>
#include <vector>

#include "dlio/generator.h"
#include "dlio/storage.h"
#include "generator/generator_test_util.h"
#include "test_util.h"

namespace dlio {
namespace {

using generator_testing::AllFiles;
using generator_testing::MemoryStorage;
using generator_testing::RawFormat;
using generator_testing::SmallDataset;

TEST_CASE("companion files of a format are moved into place with their file", "[generator]") {
  auto storage = MemoryStorage();
  RawFormat format(true);
  format.companion = true;
  DatasetConfig d = SmallDataset("ds");
  d.num_subfolders_train = 2;
  auto r = GenerateDataset(d, format, FormatOptions{}, storage.get(), GenerateOptions{});
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  CHECK(AllFiles(storage.get(), "ds/train/1") ==
        std::vector<std::string>{"img_1_of_5.raw", "img_1_of_5.raw.idx", "img_3_of_5.raw",
                                 "img_3_of_5.raw.idx"});
  CHECK(AllFiles(storage.get(), "ds/valid") ==
        std::vector<std::string>{"img_0_of_2.raw", "img_0_of_2.raw.idx", "img_1_of_2.raw",
                                 "img_1_of_2.raw.idx"});
}

TEST_CASE("a failed write leaves no final-named file and no staging folder", "[generator]") {
  auto storage = MemoryStorage();
  RawFormat format(false);
  format.companion = true;
  format.fail_after_writes = 2;
  const DatasetConfig d = SmallDataset("ds");
  auto r = GenerateDataset(d, format, FormatOptions{}, storage.get(), GenerateOptions{});
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == StatusCode::kResourceExhausted);
  CHECK(r.status().message().find("ds/train/img_2_of_5.raw") != std::string::npos);
  CHECK(AllFiles(storage.get(), "ds") ==
        std::vector<std::string>{".dlio-dataset.json", "train/img_0_of_5.raw",
                                 "train/img_0_of_5.raw.idx", "train/img_1_of_5.raw",
                                 "train/img_1_of_5.raw.idx"});
  // A rerun completes the dataset, keeping the two finished files.
  format.fail_after_writes = -1;
  auto again = GenerateDataset(d, format, FormatOptions{}, storage.get(), GenerateOptions{});
  REQUIRE(again.ok());
  CHECK(again->files_skipped == 2);
  CHECK(again->files_written == 5);
}

TEST_CASE("an orphaned companion of a killed run is replaced, also with force", "[generator]") {
  auto storage = MemoryStorage();
  RawFormat format(false);
  format.companion = true;
  const DatasetConfig d = SmallDataset("ds");
  REQUIRE(GenerateDataset(d, format, FormatOptions{}, storage.get(), GenerateOptions{}).ok());
  // A kill between the renames of the companion and its file: the index under its final name, the
  // file missing (still in the killed run's staging folder).
  REQUIRE(storage->Remove("ds/train/img_2_of_5.raw").ok());
  {
    auto idx = storage->Open("ds/train/img_2_of_5.raw.idx", OpenMode::kWrite);
    REQUIRE(idx.ok());
    REQUIRE((*idx)->WriteAt(0, "stale", 5).ok());
  }
  for (bool force : {false, true}) {
    GenerateOptions options;
    options.force = force;
    auto r = GenerateDataset(d, format, FormatOptions{}, storage.get(), options);
    INFO(r.status().ToString());
    REQUIRE(r.ok());
    CHECK(r->files_written == (force ? 0u : 1u));
    CHECK(r->files_skipped == (force ? 7u : 6u));
  }
  CHECK(*storage->FileSize("ds/train/img_2_of_5.raw") == 8 + 3 * 1024);
  auto idx = storage->Open("ds/train/img_2_of_5.raw.idx", OpenMode::kRead);
  REQUIRE(idx.ok());
  char text[6] = {};
  REQUIRE((*idx)->ReadExactAt(0, 5, text).ok());
  CHECK(std::string(text) == "index");  // the new unit's, not the orphan
}

TEST_CASE("a generation killed at any file leaves no lock and a rerun completes it",
          "[generator]") {
  testing::TempDir dir;
  namespace fs = std::filesystem;
  const DatasetConfig d = SmallDataset(dir / "data");
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {  // killed (SIGKILL, no cleanup) while writing its fourth file
    auto storage = NewPosixStorage(StorageOptions{});
    RawFormat format(false);
    format.companion = true;
    format.on_write = [](int writes) {
      if (writes == 3) ::raise(SIGKILL);
    };
    (void)GenerateDataset(d, format, FormatOptions{}, storage.get(), GenerateOptions{});
    ::_exit(0);
  }
  int wstatus = 0;
  REQUIRE(::waitpid(child, &wstatus, 0) == child);
  REQUIRE(WIFSIGNALED(wstatus));
  CHECK(fs::exists(dir / "data/.dlio-generate.lock"));  // the file stays; its flock does not

  auto storage = NewPosixStorage(StorageOptions{});
  RawFormat format(false);
  format.companion = true;
  auto r = GenerateDataset(d, format, FormatOptions{}, storage.get(), GenerateOptions{});
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  CHECK(r->files_skipped == 3);
  CHECK(r->files_written == 4);
  CHECK(r->warnings.empty());
  REQUIRE(r->removed_leftovers.size() == 1);  // the killed run's staging folder: its owner died
  CHECK(r->removed_leftovers[0].find(dir / "data/train/.dlio-tmp-rank0-") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "data/.dlio-generate.lock"));
}

}  // namespace
}  // namespace dlio
