// FitTrace's rules that hold a fitted value against what the program's files and passes were:
// images generated with the channels the probed headers declare, and a batch guessed from
// bursts held against the samples a pass read.
#include <catch2/catch.hpp>
#include <string>

#include "dlio/profile_fit.h"
#include "profile/analysis_test_util.h"
#include "profile/fit_test_util.h"
#include "profile/fit_whole_file_util.h"

namespace dlio {
namespace {

using fit_test::Fit;
using fit_test::LoadWhole;
using fit_test::ProbeEvery;
using fit_test::Value;
using testing::AddEvent;

TEST_CASE("fit: images whose headers all say RGB are generated RGB") {
  // Four png files of a 256 x 256 RGB image each, read whole once per pass, two passes.
  constexpr int64_t kSize = 197'167;
  ProfileTrace t;
  int64_t now = 1'000'000;
  for (int pass = 0; pass < 2; ++pass) {
    for (int f = 0; f < 4; ++f) {
      const std::string path = "/d/train/i" + std::to_string(f) + ".png";
      AddEvent(&t, 1, 1, "open64", now, 2, path);
      AddEvent(&t, 1, 1, "read", now + 5, 40, path, 0, kSize, kSize);
      AddEvent(&t, 1, 1, "close", now + 60, 1, path);
      now += 10'000;
    }
  }
  for (const int32_t channels : {3, 1}) {
    FitOptions options = ProbeEvery("png", kSize, 1, kSize);
    options.probe = [channels, inner = options.probe](const std::string& p) {
      auto info = inner(p);
      if (info.ok()) info->image_channels = channels;
      return info;
    };
    const FitResult r = Fit(t, options);
    INFO(channels);
    CHECK(Value(r, "dataset.format") == "png");
    CHECK(Value(r, "dataset.record_length_bytes") == "197167");
    if (channels == 3) {
      REQUIRE(r.Find("dataset.image_channels") != nullptr);
      CHECK(Value(r, "dataset.image_channels") == "3");
      CHECK(r.Find("dataset.image_channels")->reason.find("4 probed images are RGB") !=
            std::string::npos);
    } else {
      CHECK(r.Find("dataset.image_channels") == nullptr);  // DLIO's grayscale, the default
    }
  }
}

TEST_CASE("fit: a batch from bursts that would drop part of each pass keeps every read") {
  // pandas-style whole-file loads of 7 csv files of 500 rows, 3 passes; readers ahead of compute
  // pause after 3, 3 and 1 loads. The median burst, 3 loads, is 1,500 rows: an epoch of 3,500
  // rows would then read 3,000 (the last partial batch dropped), a file fewer than the program.
  constexpr int64_t kSize = 600'000;
  ProfileTrace t;
  int64_t now = 1'000'000;
  for (int pass = 0; pass < 3; ++pass) {
    int f = 0;
    for (int burst : {3, 3, 1}) {
      for (int k = 0; k < burst; ++k, ++f)
        now = LoadWhole(&t, 1, "/d/train/t" + std::to_string(f) + ".csv", kSize, now);
      now += 50'000;
    }
  }
  const FitResult r = Fit(t, ProbeEvery("csv", kSize, 500, 1200));
  CHECK(Value(r, "dataset.num_files_train") == "7");
  CHECK(Value(r, "train.epochs") == "3");
  // 1,750 (two steps) reads all 3,500; 875 is further from 1,500.
  CHECK(Value(r, "reader.batch_size") == "1750");
  CHECK(r.Find("reader.batch_size")->confidence == FitConfidence::kLow);
  CHECK(r.Find("reader.batch_size")->reason.find("1500 would read 3000 of the 3500 samples") !=
        std::string::npos);
}

}  // namespace
}  // namespace dlio
