// GenerateDataset: DLIO's file names and sample sizes, the work of each rank, the marker and
// the report.
#include "dlio/generator.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "dlio/storage.h"
#include "fake_clock.h"
#include "generator/generator_test_util.h"
#include "test_util.h"

namespace dlio {
namespace {

using generator_testing::AllFiles;
using generator_testing::Exists;
using generator_testing::MemoryStorage;
using generator_testing::RawFormat;
using generator_testing::SmallDataset;

TEST_CASE("dataset files are named as DLIO names them", "[generator]") {
  RawFormat format(false, "npz");
  DatasetConfig d;
  d.data_folder = "data/";
  d.num_files_train = 8;
  d.num_files_eval = 2;
  auto train = DatasetFiles(d, format, Split::kTrain);
  REQUIRE(train.size() == 8);
  CHECK(train[0] == "data/train/img_0_of_8.npz");
  CHECK(train[7] == "data/train/img_7_of_8.npz");
  auto eval = DatasetFiles(d, format, Split::kEval);
  REQUIRE(eval.size() == 2);
  CHECK(eval[1] == "data/valid/img_1_of_2.npz");

  d.num_files_train = 168;
  d.file_prefix = "part";
  CHECK(DatasetFiles(d, format, Split::kTrain)[7] == "data/train/part_007_of_168.npz");

  d.num_files_train = 30;
  d.num_subfolders_train = 12;
  auto sub = DatasetFiles(d, format, Split::kTrain);
  CHECK(sub[5] == "data/train/05/part_05_of_30.npz");
  CHECK(sub[17] == "data/train/05/part_17_of_30.npz");
  CHECK(sub[29] == "data/train/05/part_29_of_30.npz");
  CHECK(sub[11] == "data/train/11/part_11_of_30.npz");
  d.num_subfolders_train = 1;  // DLIO only makes subfolders for k > 1
  CHECK(DatasetFiles(d, format, Split::kTrain)[5] == "data/train/part_05_of_30.npz");
  d.num_files_eval = 4;
  d.num_subfolders_eval = 3;
  CHECK(DatasetFiles(d, format, Split::kEval)[3] == "data/valid/0/part_3_of_4.npz");

  RawFormat synthetic(false, "", false);
  CHECK(DatasetFiles(d, synthetic, Split::kEval)[2] == "data/valid/2/part_2_of_4");
}

TEST_CASE("record_length_bytes_sizes: file i's samples are sizes[i mod n] bytes", "[generator]") {
  DatasetConfig d;
  d.num_samples_per_file = 3;
  d.record_length_bytes_sizes = {442368, 36864};
  RawFormat variable(true), fixed(false);
  for (uint64_t i = 0; i < 5; ++i) {
    const uint64_t want = i % 2 == 0 ? 442368 : 36864;
    CHECK(DatasetFileSpec(d, fixed, Split::kTrain, i, 1).sample_sizes ==
          std::vector<uint64_t>(3, want));
    CHECK(DatasetFileSpec(d, variable, Split::kEval, i, 1).sample_sizes ==
          std::vector<uint64_t>(3, want));
  }
}

TEST_CASE("sample sizes are seeded, reproducible and plausible", "[generator]") {
  DatasetConfig d;
  d.num_samples_per_file = 1000;
  d.record_length_bytes = 100000;
  RawFormat variable(true), fixed(false);

  auto constant = DatasetFileSpec(d, variable, Split::kTrain, 3, 1);
  CHECK(constant.sample_sizes == std::vector<uint64_t>(1000, 100000));

  d.record_length_bytes_stdev = 10000;
  auto a = DatasetFileSpec(d, variable, Split::kTrain, 3, 1);
  auto b = DatasetFileSpec(d, variable, Split::kTrain, 3, 1);
  CHECK(a.sample_sizes == b.sample_sizes);
  CHECK(a.seed == b.seed);
  CHECK(DatasetFileSpec(d, variable, Split::kTrain, 4, 1).sample_sizes != a.sample_sizes);
  CHECK(DatasetFileSpec(d, variable, Split::kEval, 3, 1).sample_sizes != a.sample_sizes);
  CHECK(DatasetFileSpec(d, variable, Split::kTrain, 3, 2).sample_sizes != a.sample_sizes);
  double sum = 0, sq = 0;
  std::set<uint64_t> distinct;
  for (uint64_t s : a.sample_sizes) {
    CHECK(s >= 100000 - 7 * 10000);
    CHECK(s <= 100000 + 7 * 10000);
    sum += static_cast<double>(s);
    distinct.insert(s);
  }
  const double mean = sum / 1000;
  for (uint64_t s : a.sample_sizes) sq += (s - mean) * (s - mean);
  CHECK(std::abs(mean - 100000) < 1500);  // 1.5 standard errors of ~316 -> far inside
  CHECK(std::sqrt(sq / 999) == Approx(10000).epsilon(0.15));
  CHECK(distinct.size() > 900);

  auto f = DatasetFileSpec(d, fixed, Split::kTrain, 3, 1);
  REQUIRE(f.sample_sizes.size() == 1000);
  CHECK(std::set<uint64_t>(f.sample_sizes.begin(), f.sample_sizes.end()).size() == 1);
  CHECK(DatasetFileSpec(d, fixed, Split::kTrain, 5, 1).sample_sizes[0] != f.sample_sizes[0]);

  d.record_length_bytes = 10;
  d.record_length_bytes_stdev = 1000;  // most draws negative: clipped to 1
  for (uint64_t s : DatasetFileSpec(d, variable, Split::kTrain, 0, 1).sample_sizes) CHECK(s >= 1);
}

TEST_CASE("two ranks generate every file exactly once, with no .tmp left", "[generator]") {
  auto storage = MemoryStorage();
  RawFormat format(false);
  const DatasetConfig d = SmallDataset("ds");
  int barriers = 0;
  std::vector<uint64_t> progress;
  GenerateOptions options;
  options.world = 2;
  options.barrier = [&] {
    ++barriers;
    return Status::OK();
  };
  options.progress = [&](uint64_t done, uint64_t total, uint64_t) {
    progress.push_back(done * 100 + total);
  };
  auto r0 = GenerateDataset(d, format, FormatOptions{}, storage.get(), options);
  INFO(r0.status().ToString());
  REQUIRE(r0.ok());
  CHECK(r0->files_written == 4);  // train 0, 2, 4 and eval 0
  CHECK(progress == std::vector<uint64_t>{104, 204, 304, 404});
  options.rank = 1;
  auto r1 = GenerateDataset(d, format, FormatOptions{}, storage.get(), options);
  INFO(r1.status().ToString());
  REQUIRE(r1.ok());
  CHECK(r1->files_written == 3);  // train 1, 3 and eval 1
  CHECK(barriers == 4);           // each rank: after the folder check and after its files
  CHECK(format.writes == 7);
  const uint64_t file_bytes = 8 + 3 * 1024;
  CHECK(r0->bytes_written == 4 * file_bytes);
  CHECK(r1->bytes_written == 3 * file_bytes);

  std::vector<std::string> expected = {".dlio-dataset.json"};
  for (auto split : {Split::kTrain, Split::kEval}) {
    for (const auto& path : DatasetFiles(d, format, split)) expected.push_back(path.substr(3));
  }
  std::sort(expected.begin(), expected.end());
  CHECK(AllFiles(storage.get(), "ds") == expected);  // in particular, no *.tmp

  // Running again (as one rank) skips every existing file and writes nothing.
  GenerateOptions again;
  auto r2 = GenerateDataset(d, format, FormatOptions{}, storage.get(), again);
  REQUIRE(r2.ok());
  CHECK(r2->files_written == 0);
  CHECK(r2->files_skipped == 7);
  CHECK(format.writes == 7);
}

TEST_CASE("synthetic formats generate nothing and succeed", "[generator]") {
  auto storage = MemoryStorage();
  RawFormat synthetic(false, "", false);
  auto r = GenerateDataset(SmallDataset("ds"), synthetic, FormatOptions{}, storage.get(),
                           GenerateOptions{});
  REQUIRE(r.ok());
  CHECK(r->files_written == 0);
  CHECK(synthetic.writes == 0);
  CHECK_FALSE(Exists(storage.get(), "ds"));
}

TEST_CASE("the marker holds the parameters and a version", "[generator]") {
  testing::TempDir dir;
  auto storage = NewPosixStorage(StorageOptions{});
  RawFormat format(false);
  DatasetConfig d = SmallDataset(dir / "m");
  d.num_subfolders_train = 2;
  REQUIRE(DatasetMarkerPath(d) == dir / "m/.dlio-dataset.json");
  REQUIRE(GenerateDataset(d, format, FormatOptions{}, storage.get(), GenerateOptions{}).ok());
  const std::string text = testing::ReadTextFile(DatasetMarkerPath(d));
  CHECK(text.find("\"version\": 1") != std::string::npos);
  CHECK(text.find("\"dataset.record_length_bytes\": 1024") != std::string::npos);
  CHECK(text.find("\"dataset.num_subfolders_train\": 2") != std::string::npos);
  CHECK(text.find("\"dataset.format\": \"rawtest\"") != std::string::npos);
  CHECK(text.find("\"train.seed\": 123") != std::string::npos);
  CHECK(std::filesystem::exists(dir / "m/train/1/img_3_of_5.raw"));
  CHECK_FALSE(std::filesystem::exists(DatasetMarkerPath(d) + ".tmp"));
}

TEST_CASE("the generation is timed on the clock of its options", "[generator]") {
  auto storage = MemoryStorage();
  RawFormat format(false);
  testing::FakeClock clock(5'000);
  GenerateOptions options;
  options.clock = &clock;
  // Each file written takes 3 ms of fake time; nothing else moves the clock.
  options.progress = [&clock](uint64_t, uint64_t, uint64_t) { clock.Advance(3'000'000); };
  auto r = GenerateDataset(SmallDataset("ds"), format, FormatOptions{}, storage.get(), options);
  REQUIRE(r.ok());
  CHECK(r->files_written == 7);
  CHECK(r->duration_ns == 7 * 3'000'000);
}

TEST_CASE("bad rank arguments are refused", "[generator]") {
  auto storage = MemoryStorage();
  RawFormat format(false);
  GenerateOptions options;
  options.rank = 2;
  options.world = 2;
  auto r = GenerateDataset(SmallDataset("ds"), format, FormatOptions{}, storage.get(), options);
  CHECK(r.status().code() == StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dlio
