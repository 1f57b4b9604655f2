// The generator with the real built-in formats: files it writes open with the format's reader and
// hold the sample sizes DatasetFileSpec promised.
#include <catch2/catch.hpp>
#include <filesystem>
#include <memory>
#include <string>

#include "dlio/generator.h"
#include "dlio/registries.h"
#include "dlio/storage.h"
#include "test_util.h"

namespace dlio {
namespace {

std::unique_ptr<Format> MakeFormat(const std::string& name) {
  Registries registries;
  REQUIRE(RegisterBuiltinFormats(&registries).ok());
  auto factory = registries.formats.Get(name);
  INFO(factory.status().ToString());
  REQUIRE(factory.ok());
  auto format = (*factory)();
  REQUIRE(format.ok());
  return std::move(format).value();
}

void GenerateAndReadBack(const std::string& format_name, const std::string& compression) {
  testing::TempDir dir;
  auto storage = NewPosixStorage(StorageOptions{});
  auto format = MakeFormat(format_name);
  DatasetConfig d;
  d.data_folder = dir / "data";
  d.format = format_name;
  d.num_files_train = 3;
  d.num_files_eval = 1;
  d.num_samples_per_file = 4;
  d.record_length_bytes = 5000;
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
