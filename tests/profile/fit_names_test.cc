// FitTrace on data file names that are anyone's text: dlio's <prefix>_<i>_of_<n>.<ext> parsed
// without exceptions or recursion, whatever the numbers and lengths in a trace.
#include <catch2/catch.hpp>
#include <string>

#include "dlio/profile_fit.h"
#include "dlio/str_cat.h"
#include "profile/analysis_test_util.h"
#include "profile/fit_test_util.h"

namespace dlio {
namespace {

using fit_test::Fit;
using fit_test::Value;
using testing::AddEvent;

// One thread reads 8 files named name(0..7), one 100 KB sample each, in 2 passes of 2 batches
// of 4 with 20 ms of compute after each batch.
template <typename Name>
ProfileTrace EightFiles(Name name) {
  ProfileTrace t;
  int64_t now = 1'000'000;
  for (int e = 0; e < 2; ++e) {
    for (int f = 0; f < 8; ++f) {
      const std::string path = StrCat("/d/", name(f));
      if (e == 0) AddEvent(&t, 1, 1, "open64", now, 2, path);
      AddEvent(&t, 1, 1, "pread", now + 5, 40, path, 0, 100'000, 100'000);
      now += 50 + (f % 4 == 3 ? 20'000 : 0);
    }
  }
  return t;
}

TEST_CASE("fit, file names: dlio's <prefix>_<i>_of_<n> gives the prefix and the file count") {
  const FitResult r = Fit(EightFiles([](int f) { return StrCat("x_", f, "_of_12.npz"); }));
  INFO(FitYaml(r, {"test"}));
  CHECK(Value(r, "dataset.file_prefix") == "x");
  CHECK(Value(r, "dataset.num_files_train") == "12");
}

TEST_CASE("fit, file names: a count beyond int64 is no dlio name, not a crash") {
  // Before: std::stoll threw std::out_of_range (dlio-run fit aborted, exit 134).
  const FitResult r =
      Fit(EightFiles([](int f) { return StrCat("x_", f, "_of_99999999999999999999.npz"); }));
  INFO(FitYaml(r, {"test"}));
  REQUIRE(r.Find("dataset.file_prefix") != nullptr);
  CHECK_FALSE(r.Find("dataset.file_prefix")->inferred);
  CHECK(r.Find("dataset.file_prefix")->reason.find("_of_99999999999999999999.npz") !=
        std::string::npos);
  CHECK(Value(r, "dataset.num_files_train") == "8");
}

TEST_CASE("fit, file names: a count no dataset has is not trusted") {
  // Fits in int64, but 10^15 files would be emulated (and files x samples overflow).
  const FitResult r =
      Fit(EightFiles([](int f) { return StrCat("x_", f, "_of_1000000000000000.npz"); }));
  INFO(FitYaml(r, {"test"}));
  CHECK_FALSE(r.Find("dataset.file_prefix")->inferred);
  CHECK(Value(r, "dataset.num_files_train") == "8");
}

TEST_CASE("fit, file names: near misses of dlio's pattern are no dlio names") {
  for (const char* tail : {"_of_12", "_of_12.", "_1_of_.npz", "__of_12.npz", "_+1_of_12.npz",
                           "_1_of_-12.npz", "_1_of_0.npz", "_1_0f_12.npz"}) {
    const std::string stem = StrCat("x", tail);
    const FitResult r = Fit(EightFiles([&](int f) { return StrCat("s", f, "/", stem); }));
    INFO(stem << "\n" << FitYaml(r, {"test"}));
    CHECK_FALSE(r.Find("dataset.file_prefix")->inferred);
  }
  // The prefix may hold dots and underscores: the last _<i>_of_<n> before the last dot counts.
  const FitResult r = Fit(EightFiles([](int f) { return StrCat("a.b_c_", f, "_of_8.npz"); }));
  CHECK(Value(r, "dataset.file_prefix") == "a.b_c");
}

TEST_CASE("fit, file names: a 64 KiB basename is refused, not matched by recursion") {
  // Before: std::regex_match recursed once per character and overflowed the stack (exit 139).
  const std::string longname(64 * 1024, 'x');
  const FitResult r = Fit(EightFiles([&](int f) { return StrCat(longname, "_", f, "_of_8.npz"); }));
  REQUIRE(r.Find("dataset.file_prefix") != nullptr);
  CHECK_FALSE(r.Find("dataset.file_prefix")->inferred);
  CHECK(r.Find("dataset.file_prefix")->reason.find("characters)") != std::string::npos);
  CHECK(Value(r, "dataset.num_files_train") == "8");
}

}  // namespace
}  // namespace dlio
