// FitTrace's passes by generation of reading processes where samples read again tell none: a
// loader that reads a file whole for each of the samples it holds (a zarr-style chunk store
// without a cache) reads every file many times within one epoch of DataLoader workers.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "dlio/profile_fit.h"
#include "profile/analysis_test_util.h"
#include "profile/fit_test_util.h"

namespace dlio {
namespace {

using fit_test::Fit;
using fit_test::Value;
using testing::AddEvent;

constexpr int kFiles = 16;
constexpr int64_t kSize = 60'000;

std::string PathOf(int f) { return "/d/volume.zarr/" + std::to_string(f) + ".0.0"; }

// One f.read() of a whole chunk file as CPython makes it: open, fstat, read(size + 1), read(1)
// at the end (returns 0), close.
void ReadWhole(ProfileTrace* t, int32_t pid, int64_t at, int f) {
  const std::string path = PathOf(f);
  AddEvent(t, pid, pid, "open64", at, 3, path, -1, -1, 5);
  AddEvent(t, pid, pid, "fstat64", at + 4, 1, path);
  AddEvent(t, pid, pid, "read", at + 6, 30, path, 0, kSize + 1, kSize);
  AddEvent(t, pid, pid, "read", at + 40, 1, path, kSize, 1, 0);
  AddEvent(t, pid, pid, "close", at + 45, 1, path);
}

// `generations` of 2 worker processes (pids 100 * g + w); in each generation every file is read
// `reads_of(f)` times, in a shuffled order dealt to the two workers, 1 ms apart; the next
// generation starts 50 ms after the last one ended.
template <typename ReadsOf>
ProfileTrace Generations(int generations, ReadsOf reads_of) {
  ProfileTrace t;
  std::mt19937 rng(5);
  int64_t at = 1'000'000;
  for (int g = 0; g < generations; ++g) {
    std::vector<int> order;
    for (int f = 0; f < kFiles; ++f) order.insert(order.end(), reads_of(f), f);
    std::shuffle(order.begin(), order.end(), rng);
    for (size_t k = 0; k < order.size(); ++k) {
      ReadWhole(&t, 100 * (g + 1) + static_cast<int32_t>(k % 2), at, order[k]);
      at += 1'000;
    }
    at += 50'000;
  }
  return t;
}

TEST_CASE("fit: every file read whole 8 times in each of 2 worker generations: 16 epochs") {
  const FitResult r = Fit(Generations(2, [](int) { return 8; }));
  INFO(r.Find("train.epochs")->reason);
  CHECK(Value(r, "train.epochs") == "16");
  CHECK(r.Find("train.epochs")->reason.find("2 generations of 2 reading processes") !=
        std::string::npos);
  CHECK(r.Find("train.epochs")->reason.find("every sample is read 8 times") != std::string::npos);
  // The readers of a generation, new each epoch, whose files the emulation opens anew.
  CHECK(Value(r, "reader.read_threads") == "2");
  CHECK(Value(r, "reader.persistent_workers") == "false");
  CHECK(Value(r, "reader.reopen_files_each_epoch") == "true");
  CHECK(Value(r, "dataset.num_files_train") == std::to_string(kFiles));
  CHECK(Value(r, "dataset.num_samples_per_file") == "1");
}

TEST_CASE(
    "fit: files read once per generation, or unevenly, keep the passes of samples read again") {
  // A plain loader: each file once per epoch, 3 generations; the passes by re-read are the
  // generations already.
  FitResult r = Fit(Generations(3, [](int) { return 1; }));
  CHECK(Value(r, "train.epochs") == "3");
  CHECK(r.Find("train.epochs")->reason.find("generations") == std::string::npos);
  // Files read 1 to 4 times in a generation: no one count of reads, nothing taken from it.
  r = Fit(Generations(2, [](int f) { return 1 + f % 4; }));
  CHECK(r.Find("train.epochs")->reason.find("generations") == std::string::npos);
}

}  // namespace
}  // namespace dlio
