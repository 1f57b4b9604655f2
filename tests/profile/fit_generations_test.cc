// FitTrace's passes by generation of reading processes where samples read again tell none: a
// loader that reads a file whole for each of the samples it holds (a zarr-style chunk store
// without a cache) reads every file many times within one epoch of DataLoader workers.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "dlio/format.h"
#include "dlio/profile_fit.h"
#include "profile/analysis_test_util.h"
#include "profile/fit_test_util.h"

namespace dlio {
namespace {

using fit_test::Fit;
using fit_test::Value;
using fit_test::WithPyioRequests;
using testing::AddEvent;

constexpr int kGenerationFiles = 16;
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
    for (int f = 0; f < kGenerationFiles; ++f) order.insert(order.end(), reads_of(f), f);
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
  CHECK(Value(r, "dataset.num_files_train") == std::to_string(kGenerationFiles));
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

// One sample of a WAV-style loader as CPython's wave module makes it: open, fstat, the raw tell
// of open, the header's 4 KiB fill, a tell, a seek to the crop and read(32000) of it (28,672
// bytes straight, then a fill).
void ReadCrop(ProfileTrace* t, int32_t pid, int64_t at, const std::string& path, int64_t crop_at) {
  AddEvent(t, pid, pid, "open64", at, 3, path, -1, -1, 5);
  AddEvent(t, pid, pid, "fstat64", at + 4, 1, path);
  AddEvent(t, pid, pid, "lseek64", at + 6, 1, path, 0, -1, 0);
  AddEvent(t, pid, pid, "read", at + 8, 5, path, 0, 4096, 4096);
  AddEvent(t, pid, pid, "lseek64", at + 15, 1, path, 0, -1, 4096);
  AddEvent(t, pid, pid, "lseek64", at + 17, 1, path, crop_at, -1, crop_at);
  AddEvent(t, pid, pid, "read", at + 20, 20, path, crop_at, 28'672, 28'672);
  AddEvent(t, pid, pid, "read", at + 42, 4, path, crop_at + 28'672, 4096, 4096);
  AddEvent(t, pid, pid, "close", at + 50, 1, path);
}

TEST_CASE("fit: random crops of whole files in 2 worker generations: a file a sample, pyio crops") {
  constexpr int kWavs = 40;
  ProfileTrace t;
  std::mt19937 rng(3);
  int64_t at = 1'000'000;
  for (int g = 0; g < 2; ++g) {
    std::vector<int> order(kWavs);
    for (int f = 0; f < kWavs; ++f) order[static_cast<size_t>(f)] = f;
    std::shuffle(order.begin(), order.end(), rng);
    for (size_t k = 0; k < order.size(); ++k) {
      const int f = order[k];
      const int64_t size = 64'044 + 1'600 * f;  // 2 s to 4 s of 16-bit samples at 16 kHz
      const int64_t crop_at = 44 + 2 * static_cast<int64_t>(rng() % ((size - 44 - 32'000) / 2));
      ReadCrop(&t, 100 * (g + 1) + static_cast<int32_t>(k % 2), at,
               "/d/wavs/utt_" + std::to_string(f) + ".wav", crop_at);
      at += 1'000;
    }
    at += 50'000;
  }
  const FitResult r = Fit(t, WithPyioRequests());
  INFO(r.Find("train.epochs")->reason);
  CHECK(Value(r, "train.epochs") == "2");
  CHECK(r.Find("train.epochs")->reason.find("random crops") != std::string::npos);
  CHECK(Value(r, "dataset.num_files_train") == std::to_string(kWavs));
  CHECK(Value(r, "dataset.num_samples_per_file") == "1");
  CHECK(Value(r, "reader.read_threads") == "2");
  CHECK(Value(r, "reader.io_model") == "pyio");
  CHECK(Value(r, "reader.pyio_crop_bytes") == "32767");
  CHECK(Value(r, "reader.pyio_call") == "read");
  // The files' sizes as quantiles of the largest offsets read, none below the shortest file read.
  const std::string sizes = Value(r, "dataset.record_length_bytes_sizes");
  INFO(sizes);
  REQUIRE(sizes.size() > 2);
  int64_t smallest = INT64_MAX, n = 0;
  for (size_t p = 1; p < sizes.size(); ++p) {
    const int64_t v = std::stoll(sizes.substr(p));
    smallest = std::min(smallest, v);
    ++n;
    p = sizes.find(',', p);
    if (p == std::string::npos) break;
  }
  CHECK(n == 16);
  CHECK(smallest >= 44 + 32'768);
  CHECK(Value(r, "dataset.record_length_bytes_stdev") == "0");
}

TEST_CASE("fit: samples at fixed offsets read once per generation are no crops") {
  // 8 files of 4 records of 40,000 bytes, each record opened and read at its offset
  // (np.fromfile(path, offset=...)) once in each of 2 generations: the offsets repeat.
  ProfileTrace t;
  std::mt19937 rng(4);
  int64_t at = 1'000'000;
  for (int g = 0; g < 2; ++g) {
    std::vector<int> order(32);
    for (int k = 0; k < 32; ++k) order[static_cast<size_t>(k)] = k;
    std::shuffle(order.begin(), order.end(), rng);
    for (size_t k = 0; k < order.size(); ++k) {
      const std::string path = "/d/rec_" + std::to_string(order[k] / 4) + ".bin";
      const int32_t pid = 100 * (g + 1) + static_cast<int32_t>(k % 2);
      const int64_t offset = 40'000 * (order[k] % 4);
      AddEvent(&t, pid, pid, "open64", at, 3, path, -1, -1, 5);
      AddEvent(&t, pid, pid, "pread", at + 5, 20, path, offset, 40'000, 40'000);
      AddEvent(&t, pid, pid, "close", at + 30, 1, path);
      at += 1'000;
    }
    at += 50'000;
  }
  const FitResult r = Fit(t, WithPyioRequests());
  CHECK(Value(r, "train.epochs") == "2");
  CHECK(r.Find("train.epochs")->reason.find("crops") == std::string::npos);
  CHECK(Value(r, "dataset.num_samples_per_file") == "4");
  CHECK(r.Find("reader.pyio_crop_bytes") == nullptr);
}

}  // namespace
}  // namespace dlio
