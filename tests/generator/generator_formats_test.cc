// The generator with the real built-in formats: files it writes open with the format's reader and
// hold the sample sizes DatasetFileSpec promised.
#include <catch2/catch.hpp>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "dlio/generator.h"
#include "dlio/registries.h"
#include "dlio/storage.h"
#include "format/hdf5/hdf5_options.h"
#include "test_util.h"

namespace dlio {
namespace {

std::unique_ptr<Format> MakeFormat(const std::string& name) {
  Registries registries;
  REQUIRE(RegisterBuiltinFormats(&registries.formats).ok());
  auto factory = registries.formats.Get(name);
  INFO(factory.status().ToString());
  REQUIRE(factory.ok());
  auto format = (*factory)();
  REQUIRE(format.ok());
  return std::move(format).value();
}

// A dataset of `format` in `folder`: 3 train files and 1 eval file of `samples` samples.
DatasetConfig Dataset(const std::string& folder, const std::string& format, uint64_t samples,
                      uint64_t record_length) {
  DatasetConfig d;
  d.data_folder = folder;
  d.format = format;
  d.num_files_train = 3;
  d.num_files_eval = 1;
  d.num_samples_per_file = samples;
  d.record_length_bytes = record_length;
  return d;
}

void GenerateAndReadBack(const std::string& format_name, const std::string& compression) {
  testing::TempDir dir;
  auto storage = NewPosixStorage(StorageOptions{});
  auto format = MakeFormat(format_name);
  DatasetConfig d = Dataset(dir / "data", format_name, 4, 5000);
  d.record_length_bytes_stdev = 800;
  d.compression = compression;
  FormatOptions format_options;
  format_options.compression = compression;
  GenerateOptions options;
  options.seed = 42;
  auto report = GenerateDataset(d, *format, format_options, storage.get(), options);
  INFO(format_name << ": " << report.status().ToString());
  REQUIRE(report.ok());
  CHECK(report->files_written == 4);
  CHECK(report->bytes_written > 0);

  for (auto split : {Split::kTrain, Split::kEval}) {
    const auto files = DatasetFiles(d, *format, split);
    for (uint64_t i = 0; i < files.size(); ++i) {
      INFO(files[i]);
      auto reader = format->Open(storage.get(), files[i], format_options);
      REQUIRE(reader.ok());
      const FileSpec spec = DatasetFileSpec(d, *format, split, i, options.seed);
      REQUIRE((*reader)->num_samples() == 4);
      SampleBuffer buffer;
      for (uint64_t s = 0; s < 4; ++s) {
        CHECK((*reader)->sample_size(s) == spec.sample_sizes[s]);
        REQUIRE((*reader)->ReadSample(s, &buffer).ok());
        CHECK(buffer.size() == spec.sample_sizes[s]);
      }
    }
  }
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir / "data")) {
    CHECK(entry.path().filename().string().rfind(".dlio-tmp", 0) != 0);
  }
  // A second run finds everything in place.
  auto again = GenerateDataset(d, *format, format_options, storage.get(), options);
  REQUIRE(again.ok());
  CHECK(again->files_skipped == 4);
  CHECK(again->files_written == 0);
}

TEST_CASE("generator writes readable npz files", "[generator]") {
  GenerateAndReadBack("npz", "none");
}

TEST_CASE("generator writes readable compressed npz files", "[generator]") {
  GenerateAndReadBack("npz", "gzip");
}

TEST_CASE("generator moves indexed_binary's index files into place", "[generator]") {
  GenerateAndReadBack("indexed_binary", "none");
}

TEST_CASE("jpeg, png and csv datasets resume: complete files are kept, others refused",
          "[generator]") {
  for (const std::string name : {"jpeg", "png", "csv"}) {
    CAPTURE(name);
    testing::TempDir dir;
    auto storage = NewPosixStorage(StorageOptions{});
    auto format = MakeFormat(name);
    const DatasetConfig d = Dataset(dir / "data", name, name == "csv" ? 4 : 1, 4096);  // images: 1
    auto first = GenerateDataset(d, *format, FormatOptions{}, storage.get(), GenerateOptions{});
    INFO(first.status().ToString());
    REQUIRE(first.ok());
    CHECK(first->files_written == 4);
    const auto train = DatasetFiles(d, *format, Split::kTrain);
    REQUIRE(std::filesystem::remove(train[1]));  // an interrupted generation: resume it
    auto again = GenerateDataset(d, *format, FormatOptions{}, storage.get(), GenerateOptions{});
    INFO(again.status().ToString());
    REQUIRE(again.ok());
    CHECK(again->files_skipped == 3);
    CHECK(again->files_written == 1);
    // A file that does not open as the format, or holds other samples, is not this dataset's.
    const std::string garbage = "not a " + name + " file\nsecond line\n" + std::string(9000, 'x');
    testing::WriteTextFile(train[2], garbage);
    auto refused = GenerateDataset(d, *format, FormatOptions{}, storage.get(), GenerateOptions{});
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.status().code() == StatusCode::kAlreadyExists);
    CHECK(refused.status().message().find(train[2]) != std::string::npos);
    CHECK(testing::ReadTextFile(train[2]) == garbage);
  }
}

TEST_CASE("orphaned companions of real formats are replaced by a rerun", "[generator]") {
  struct Case {
    std::string format, companion;
    bool metadata_file;
  };
  std::vector<Case> cases = {{"tfrecord", ".idx", false}, {"indexed_binary", ".off.idx", false}};
  Registries registries;
  REQUIRE(RegisterBuiltinFormats(&registries.formats).ok());
  if (registries.formats.Get("hdf5").ok()) cases.push_back({"hdf5", ".meta.h5", true});
  for (const Case& c : cases) {
    CAPTURE(c.format);
    testing::TempDir dir;
    auto storage = NewPosixStorage(StorageOptions{});
    auto format = MakeFormat(c.format);
    const DatasetConfig d = Dataset(dir / "data", c.format, 5, 3000);
    FormatOptions fo;
    fo.formats.Get<Hdf5Options>().metadata_file = c.metadata_file;
    REQUIRE(GenerateDataset(d, *format, fo, storage.get(), GenerateOptions{}).ok());
    // A kill between the renames of the companion and its file (the reproduction of issue 9:
    // strace -e inject=rename:signal=KILL:when=3): the companion under its final name, no file.
    const std::string file = DatasetFiles(d, *format, Split::kTrain)[1];
    REQUIRE(std::filesystem::remove(file));
    testing::WriteTextFile(file + c.companion, "stale");
    for (const bool force : {false, true}) {
      GenerateOptions options;
      options.force = force;
      auto r = GenerateDataset(d, *format, fo, storage.get(), options);
      INFO(r.status().ToString());
      REQUIRE(r.ok());
      CHECK(r->files_written == (force ? 0u : 1u));
    }
    auto reader = format->Open(storage.get(), file, fo);
    INFO(reader.status().ToString());
    REQUIRE(reader.ok());
    REQUIRE((*reader)->num_samples() == 5);
    SampleBuffer buffer;
    for (uint64_t s = 0; s < 5; ++s) REQUIRE((*reader)->ReadSample(s, &buffer).ok());
    CHECK(testing::ReadTextFile(file + c.companion) != "stale");
  }
}

TEST_CASE("generator writes nothing for the synthetic format", "[generator]") {
  testing::TempDir dir;
  auto storage = NewPosixStorage(StorageOptions{});
  auto format = MakeFormat("synthetic");
  DatasetConfig d;
  d.data_folder = dir / "none";
  auto report = GenerateDataset(d, *format, FormatOptions{}, storage.get(), GenerateOptions{});
  REQUIRE(report.ok());
  CHECK(report->files_written == 0);
  CHECK_FALSE(std::filesystem::exists(dir / "none"));
}

}  // namespace
}  // namespace dlio
