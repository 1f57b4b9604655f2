// ListDatasetFiles: a run finds its files as the Python DLIO does (list, keep the format's files,
// sort, take the first num_files_*), and hdf5 datasets are named .hdf5 as DLIO names them.
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "dlio/generator.h"
#include "dlio/storage.h"
#include "format/format_test_util.h"
#include "format/hdf5/hdf5_options.h"
#include "generator/generator_test_util.h"

namespace dlio {
namespace {

using generator_testing::MemoryStorage;
using generator_testing::RawFormat;

std::unique_ptr<Format> BuiltinFormat(const std::string& name) {
  auto format = testing::MakeFormatByName(name);
  REQUIRE(format != nullptr);
  return format;
}

DatasetConfig Data(const std::string& folder, uint64_t files, uint64_t subfolders = 0) {
  DatasetConfig d;
  d.data_folder = folder;
  d.num_files_train = files;
  d.num_subfolders_train = subfolders;
  return d;
}

void Touch(Storage* storage, const std::string& path) {
  const std::string parent = path.substr(0, path.rfind('/'));
  REQUIRE(storage->CreateDirs(parent).ok());
  auto file = storage->Open(path, OpenMode::kCreateNew);
  REQUIRE(file.ok());
  REQUIRE((*file)->Close().ok());
}

std::vector<std::string> List(const DatasetConfig& d, const Format& format, Storage* storage,
                              Split split = Split::kTrain, const FormatOptions& o = {}) {
  auto files = ListDatasetFiles(d, format, o, split, storage);
  INFO(files.status().ToString());
  REQUIRE(files.ok());
  return *files;
}

TEST_CASE("hdf5 datasets are named .hdf5 as DLIO names them, .h5 is read too", "[generator]") {
  auto hdf5 = BuiltinFormat("hdf5");
  CHECK(hdf5->extension() == "hdf5");
  CHECK(hdf5->read_extensions() == std::vector<std::string>{"hdf5", "h5"});
  const DatasetConfig d = Data("/d", 2);
  CHECK(DatasetFiles(d, *hdf5, Split::kTrain)[1] == "/d/train/img_1_of_2.hdf5");
  CHECK(BuiltinFormat("npz")->read_extensions() == std::vector<std::string>{"npz"});

  auto storage = MemoryStorage();
  Touch(storage.get(), "/d/train/vol_0.h5");
  Touch(storage.get(), "/d/train/img_1_of_2.hdf5");
  Touch(storage.get(), "/d/train/img_1_of_2.hdf5.meta.h5");  // a companion, with metadata_file
  FormatOptions o;
  o.formats.Get<Hdf5Options>().metadata_file = true;
  CHECK(List(d, *hdf5, storage.get(), Split::kTrain, o) ==
        std::vector<std::string>{"/d/train/img_1_of_2.hdf5", "/d/train/vol_0.h5"});
}

TEST_CASE("a run uses the first num_files_train files of a larger dataset", "[generator]") {
  RawFormat npz(false, "npz");
  auto storage = MemoryStorage();
  // DLIO's names for 8 files, a stray file and a hidden one that DLIO would skip or dlio leaves.
  const DatasetConfig big = Data("/data", 8);
  for (const auto& path : DatasetFiles(big, npz, Split::kTrain)) Touch(storage.get(), path);
  Touch(storage.get(), "/data/train/README.txt");
  Touch(storage.get(), "/data/train/.dlio-tmp-1.npz");
  Touch(storage.get(), "/data/train/npz");

  DatasetConfig d = big;
  d.num_files_train = 3;
  CHECK(List(d, npz, storage.get()) == std::vector<std::string>{"/data/train/img_0_of_8.npz",
                                                                "/data/train/img_1_of_8.npz",
                                                                "/data/train/img_2_of_8.npz"});
  CHECK(List(big, npz, storage.get()).size() == 8);

  SECTION("too few files: an error naming the folder and the key") {
    d.num_files_train = 9;
    auto files = ListDatasetFiles(d, npz, {}, Split::kTrain, storage.get());
    REQUIRE(files.status().code() == StatusCode::kNotFound);
    CHECK_THAT(files.status().message(),
               Catch::Contains("dataset.num_files_train is 9 but /data/train holds 8 file(s) "
                               "named *.npz"));
  }
  SECTION("a missing folder") {
    d.data_folder = "/nowhere";
    auto files = ListDatasetFiles(d, npz, {}, Split::kTrain, storage.get());
    REQUIRE(files.status().code() == StatusCode::kNotFound);
    CHECK_THAT(files.status().message(), Catch::Contains("/nowhere/train (missing) holds 0"));
  }
  SECTION("no eval files: no listing (DLIO needs valid/, dlio does not)") {
    d.num_files_eval = 0;
    CHECK(List(d, npz, storage.get(), Split::kEval).empty());
  }
}

TEST_CASE("subfolders are listed and their files sorted by base name", "[generator]") {
  RawFormat npz(false, "npz");
  auto storage = MemoryStorage();
  DatasetConfig d = Data("/data", 12, 3);
  const auto expected = DatasetFiles(d, npz, Split::kTrain);
  for (const auto& path : expected) Touch(storage.get(), path);
  Touch(storage.get(), "/data/train/stray.npz");  // not in a subfolder: DLIO's glob skips it
  Touch(storage.get(), "/data/train/notes");
  CHECK(List(d, npz, storage.get()) == expected);
  d.num_files_train = 5;
  CHECK(List(d, npz, storage.get()) ==
        std::vector<std::string>(expected.begin(), expected.begin() + 5));
}

TEST_CASE("formats without files keep their virtual names", "[generator]") {
  RawFormat synthetic(false, "", false);
  const DatasetConfig d = Data("/data", 2);
  CHECK(List(d, synthetic, nullptr) == DatasetFiles(d, synthetic, Split::kTrain));
}

}  // namespace
}  // namespace dlio
