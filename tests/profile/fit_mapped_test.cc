// FitTrace on data read through mappings (np.load(mmap_mode='r') in DataLoader workers): the rows
// come in as page faults, so passes come from the generations of mapping processes, and batch and
// compute are left at their defaults with the reason; a main process that maps the data for its
// shape alone is no reader.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "dlio/profile_fit.h"
#include "profile/analysis_test_util.h"
#include "profile/fit_test_util.h"

namespace dlio {
namespace {

using fit_test::Fit;
using fit_test::Value;
using testing::AddEvent;

constexpr char kMappedPath[] = "/d/features.npy";
constexpr int64_t kMappedRows = 2048, kRow = 8192, kHeader = 128;
constexpr int64_t kFile = kHeader + kMappedRows * kRow;

FitOptions NpyProbe() {
  DataFileInfo info;
  info.format = "npy";
  info.size = kFile;
  info.samples = kMappedRows;
  info.sample_sizes.assign(kMappedRows, kRow);
  info.data_bytes = kMappedRows * kRow;
  FitOptions options = fit_test::ProbingAs(std::move(info));
  options.io_model_under_auto = [](const std::string&) { return std::string("numpy"); };
  return options;
}

// One np.load(path, mmap_mode='r') in process `pid` at `at` (microseconds) as numpy makes it:
// np.load's open and magic fill, open_memmap's header, numpy.memmap's open, seek to the end,
// tell and mapping; then, `life_us` later (the worker's life), the pages it had mapped in: the
// whole file (large folios) however few rows it copied out; none when `touched` is false (a
// Dataset's __init__ that maps the file for its shape alone).
void MappedLoad(ProfileTrace* t, int32_t pid, int64_t at, int64_t life_us, bool touched = true) {
  AddEvent(t, pid, pid, "open64", at, 5, kMappedPath, -1, -1, 11);
  AddEvent(t, pid, pid, "fstat64", at + 6, 1, kMappedPath);
  AddEvent(t, pid, pid, "lseek64", at + 8, 1, kMappedPath, 0, -1, 0);
  AddEvent(t, pid, pid, "read", at + 10, 4, kMappedPath, 0, 4096, 4096);
  AddEvent(t, pid, pid, "open64", at + 20, 5, kMappedPath, -1, -1, 12);
  AddEvent(t, pid, pid, "fstat64", at + 26, 1, kMappedPath);
  AddEvent(t, pid, pid, "read", at + 30, 4, kMappedPath, 0, 4096, 4096);
  AddEvent(t, pid, pid, "close", at + 40, 1, kMappedPath);
  AddEvent(t, pid, pid, "open64", at + 50, 5, kMappedPath, -1, -1, 12);
  AddEvent(t, pid, pid, "fstat64", at + 56, 1, kMappedPath);
  AddEvent(t, pid, pid, "lseek64", at + 58, 1, kMappedPath, 0, -1, kFile);
  AddEvent(t, pid, pid, "mmap64", at + 60, 3, kMappedPath, 0, kFile, 0);
  AddEvent(t, pid, pid, "close", at + 70, 1, kMappedPath);
  AddEvent(t, pid, pid, "close", at + 72, 1, kMappedPath);
  if (touched) AddEvent(t, pid, pid, "mmap.touched", at + life_us, 0, kMappedPath, 0, kFile, kFile);
}

// `generations` of `workers` processes each (pids 100 * g + w), a generation's workers mapping the
// file 2 ms apart and living 150 ms, the next generation 50 ms after the last one ended.
ProfileTrace Generations(int generations, const std::vector<int>& workers) {
  ProfileTrace t;
  int64_t at = 1'000'000;
  for (int g = 0; g < generations; ++g) {
    const int n = workers[static_cast<size_t>(g) % workers.size()];
    for (int w = 0; w < n; ++w) MappedLoad(&t, 100 * (g + 1) + w, at + w * 2'000, 150'000);
    at += n * 2'000 + 150'000 + 50'000;
  }
  return t;
}

TEST_CASE("fit: rows of a mapped .npy in workers forked per epoch: a pass per generation") {
  for (const int generations : {2, 3}) {
    INFO(generations << " generations");
    const FitResult r = Fit(Generations(generations, {2}), NpyProbe());
    CHECK(Value(r, "reader.io_model") == "mmap");
    // Each worker maps the file itself: worker processes, not threads sharing one mapping.
    CHECK(Value(r, "reader.loader") == "pytorch_workers");
    CHECK(Value(r, "reader.persistent_workers") == "false");
    CHECK(Value(r, "reader.read_threads") == "2");
    CHECK(Value(r, "train.epochs") == std::to_string(generations));
    CHECK(r.Find("train.epochs")->reason.find("generations of 2 processes") != std::string::npos);
    INFO(r.Find("dataset.num_samples_per_file")->reason);
    CHECK(Value(r, "dataset.num_samples_per_file") == std::to_string(kMappedRows));
    // The gaps between workers are no steps, and no read counts a batch.
    CHECK_FALSE(r.Find("reader.batch_size")->inferred);
    CHECK(r.Find("reader.batch_size")->reason.find("mappings") != std::string::npos);
    CHECK_FALSE(r.Find("train.computation_time")->inferred);
    CHECK(r.Find("train.computation_time")->reason.find("mappings") != std::string::npos);
    CHECK(r.Find("train.total_training_steps") == nullptr);
    // Each generation's workers map it in processes of their own: new readers, not remappings.
    CHECK(r.Find("reader.reopen_files_each_epoch")->reason.find("new threads or processes") !=
          std::string::npos);
  }
}

TEST_CASE("fit: a main process that maps the data for its shape alone is no reader") {
  // np.load(path, mmap_mode='r').shape[0] in the Dataset's __init__ (pid 50), before the workers:
  // its header reads are all it reads, where each worker's access of the file is its touched run.
  ProfileTrace t = Generations(2, {2});
  MappedLoad(&t, 50, 900'000, 0, false);
  const FitResult r = Fit(t, NpyProbe());
  INFO(FitYaml(r, {"test"}));
  CHECK(Value(r, "reader.io_model") == "mmap");
  CHECK(Value(r, "reader.read_threads") == "2");
  CHECK(Value(r, "train.epochs") == "2");
  CHECK(Value(r, "reader.open_files_at_start") == "true");
  const FitResult alone = Fit(Generations(2, {2}), NpyProbe());
  const FitEntry* none = alone.Find("reader.open_files_at_start");
  CHECK((none == nullptr || !none->inferred));
}

TEST_CASE("fit: mapped data in generations of unequal size, or one process, keeps read passes") {
  // 2 workers, then 1: not a loader's epochs; nothing is taken from the processes.
  FitResult r = Fit(Generations(2, {2, 1}), NpyProbe());
  CHECK(Value(r, "reader.io_model") == "mmap");
  CHECK(r.Find("train.epochs")->reason.find("generations") == std::string::npos);
  CHECK(Value(r, "train.epochs") == "1");
  // One process mapping the file once: one pass.
  ProfileTrace one;
  MappedLoad(&one, 7, 1'000'000, 300'000);
  r = Fit(one, NpyProbe());
  CHECK(Value(r, "reader.io_model") == "mmap");
  CHECK(Value(r, "train.epochs") == "1");
  CHECK(r.Find("train.epochs")->reason.find("1 mapping of a data file") != std::string::npos);
  CHECK_FALSE(r.Find("reader.batch_size")->inferred);
  CHECK(r.Find("reader.reopen_files_each_epoch") == nullptr);
  // One process mapping it anew each of 3 epochs (the old mapping released after the new one is
  // made): 3 passes.
  ProfileTrace three;
  for (int e = 0; e < 3; ++e) MappedLoad(&three, 7, 1'000'000 + e * 400'000, 500'000);
  r = Fit(three, NpyProbe());
  CHECK(Value(r, "train.epochs") == "3");
  CHECK(r.Find("train.epochs")->reason.find("3 mappings of a data file") != std::string::npos);
  CHECK(Value(r, "reader.read_threads") == "1");
  // The emulation must map anew each epoch too, where it would keep its one mapping (nanoGPT's
  // get_batch re-creates np.memmap for every batch).
  CHECK(Value(r, "reader.reopen_files_each_epoch") == "true");
  CHECK(r.Find("reader.reopen_files_each_epoch")->reason.find("maps each data file anew") !=
        std::string::npos);
}

// raw's model under auto, as dlio-run fit's registries say: native (so a mapping is mmap's).
FitOptions RawUnderAuto() {
  FitOptions options;
  options.io_model_under_auto = [](const std::string&) { return std::string("native"); };
  return options;
}

// One PIL load of a raw TIFF of `size` bytes in process `pid` at `at`: Image.open's open and
// header fill (kept open), ImageFile.load's second open, its fstat and mmap.mmap's, the mapping,
// that file closed, map.size()'s fstat, the first file closed, the mapping's dup closed, the
// touched pages and the munmap. Without `head`, no header fill: a mapping alone (np.memmap).
void PilRawLoad(ProfileTrace* t, int32_t pid, int64_t at, const std::string& path, int64_t size,
                bool head = true) {
  AddEvent(t, pid, pid, "open64", at, 5, path, -1, -1, 11);
  AddEvent(t, pid, pid, "fstat64", at + 6, 1, path);
  if (head) AddEvent(t, pid, pid, "read", at + 10, 4, path, 0, 4096, 4096);
  AddEvent(t, pid, pid, "open64", at + 20, 5, path, -1, -1, 12);
  AddEvent(t, pid, pid, "fstat64", at + 26, 1, path);
  AddEvent(t, pid, pid, "fstat64", at + 28, 1, path);
  AddEvent(t, pid, pid, "mmap64", at + 30, 3, path, 0, size, 0);
  AddEvent(t, pid, pid, "close", at + 40, 1, path);
  AddEvent(t, pid, pid, "fstat64", at + 42, 1, path);
  AddEvent(t, pid, pid, "close", at + 50, 1, path);
  AddEvent(t, pid, pid, "close", at + 60, 1, path);
  AddEvent(t, pid, pid, "mmap.touched", at + 62, 0, path, 0, size, size);
  AddEvent(t, pid, pid, "munmap", at + 70, 2, path, 0, size, 0);
}

TEST_CASE("fit: PIL's loads of raw TIFFs, a header read before each mapping: mmap_head_bytes") {
  ProfileTrace t;
  int64_t at = 1'000'000;
  for (int e = 0; e < 2; ++e) {
    for (int f = 0; f < 32; ++f) {
      PilRawLoad(&t, 100 * (e + 1) + f % 2, at,
                 "/d/tiles/tile_" + std::to_string((f * 5) % 32) + ".tif", 131'194);
      at += 3'000;
    }
    at += 100'000;
  }
  const FitResult r = Fit(t, RawUnderAuto());
  INFO(r.Find("reader.io_model")->reason);
  CHECK(Value(r, "dataset.format") == "raw");
  CHECK(Value(r, "reader.io_model") == "mmap");
  CHECK(Value(r, "reader.mmap_head_bytes") == "4096");
  // each load unmaps before the next: the reader opens (and maps) the file for its sample alone
  CHECK(Value(r, "reader.open_per_sample") == "true");
  CHECK(r.Find("reader.io_model")->reason.find("64 of 64 mappings after a read") !=
        std::string::npos);
}

TEST_CASE("fit: mappings without a head read before them, or of a format without one, leave it") {
  // The same loads without Image.open's header fill: np.memmap of raw files.
  ProfileTrace no_heads;
  int64_t at = 1'000'000;
  for (int f = 0; f < 32; ++f) {
    PilRawLoad(&no_heads, 100 + f % 2, at, "/d/tiles/tile_" + std::to_string(f) + ".bin", 131'194,
               false);
    at += 3'000;
  }
  const FitResult r = Fit(no_heads, RawUnderAuto());
  CHECK(Value(r, "reader.io_model") == "mmap");
  CHECK(r.Find("reader.mmap_head_bytes") == nullptr);
  // np.load(mmap_mode='r') of an .npy reads its header before mapping too, but npy's mmap reader
  // reads numpy's own header: no key.
  const FitResult npy = Fit(Generations(2, {2}), NpyProbe());
  CHECK(Value(npy, "reader.io_model") == "mmap");
  CHECK(npy.Find("reader.mmap_head_bytes") == nullptr);
}

}  // namespace
}  // namespace dlio
