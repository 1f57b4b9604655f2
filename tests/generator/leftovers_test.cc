// Leftovers of killed generations: the next generation removes those of dead dlio processes of
// this host (staging folders, temporary markers) and leaves everything else alone.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "core/owner_stamp.h"
#include "dead_owner.h"
#include "dlio/generator.h"
#include "dlio/registries.h"
#include "dlio/storage.h"
#include "test_util.h"

namespace dlio {
namespace {

namespace fs = std::filesystem;

std::unique_ptr<Format> Npy() {
  Registries registries;
  REQUIRE(RegisterBuiltinFormats(&registries.formats).ok());
  auto format = (*registries.formats.Get("npy"))();
  REQUIRE(format.ok());
  return std::move(format).value();
}

void Touch(const fs::path& path) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << "someone's bytes";
}

bool Mentions(const std::vector<std::string>& lines, const std::string& path) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& l) { return l.find(path) != std::string::npos; });
}

TEST_CASE("a generation removes dead dlio processes' leftovers and nothing else", "[generator]") {
  testing::TempDir dir;
  auto storage = NewPosixStorage(StorageOptions{});
  auto format = Npy();
  DatasetConfig d;
  d.data_folder = dir / "data";
  d.format = "npy";
  d.num_files_train = 3;
  d.num_samples_per_file = 2;
  d.record_length_bytes = 1000;
  REQUIRE(GenerateDataset(d, *format, FormatOptions{}, storage.get(), GenerateOptions{}).ok());

  const std::string train = dir / "data/train";
  const std::string dead = testing::DeadOwnerToken();
  const std::string live = UniqueOwnerToken();  // this process: alive
  // Removed: a dead owner's staging folders (files only) and temporary marker.
  const std::string dead_rank = train + "/.dlio-tmp-rank0-" + dead;
  const std::string dead_shared = train + "/.dlio-tmp-shared-" + dead;
  const std::string dead_marker = dir / "data/.dlio-dataset.json.tmp-" + dead;
  Touch(dead_rank + "/img_1_of_3.npy");
  Touch(dead_shared + "/img_2_of_3.npy");
  Touch(dead_marker);
  // Kept: a live owner's, a name without an owner token, a dead owner's folder holding a folder
  // (dlio stages none), and the user's own files.
  const std::string live_rank = train + "/.dlio-tmp-rank1-" + live;
  const std::string no_token = train + "/.dlio-tmp-rank0";
  const std::string nested = train + "/.dlio-tmp-rank2-" + testing::DeadOwnerToken(7);
  const std::string live_marker = dir / "data/.dlio-dataset.json.tmp-" + live;
  Touch(live_rank + "/img_1_of_3.npy");
  Touch(no_token + "/mine.txt");
  Touch(nested + "/sub/mine.txt");
  Touch(live_marker);
  Touch(train + "/notes.txt");

  auto r = GenerateDataset(d, *format, FormatOptions{}, storage.get(), GenerateOptions{});
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  CHECK(r->files_skipped == 3);
  CHECK(r->files_written == 0);
  std::vector<std::string> removed = r->removed_leftovers;
  std::sort(removed.begin(), removed.end());
  std::vector<std::string> expected = {dead_rank, dead_shared, dead_marker};
  std::sort(expected.begin(), expected.end());
  CHECK(removed == expected);
  for (const auto& gone : expected) CHECK_FALSE(fs::exists(gone));
  for (const auto& kept : {live_rank + "/img_1_of_3.npy", no_token + "/mine.txt",
                           nested + "/sub/mine.txt", live_marker, train + "/notes.txt"}) {
    CAPTURE(kept);
    CHECK(fs::exists(kept));
  }
  for (const auto& reported : {live_rank, no_token, nested, live_marker}) {
    CAPTURE(reported);
    CHECK(Mentions(r->warnings, reported));
  }
}

}  // namespace
}  // namespace dlio
