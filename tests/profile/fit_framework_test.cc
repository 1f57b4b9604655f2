// FitTrace on hand-built traces of framework loaders whose reads are not one per sample: whole
// files streamed once per pass (pandas.read_csv, tf.data), chunk-sized crops of an hdf5 volume
// read through h5py beside a small table, reader threads re-created every pass; and DataLoader
// workers beside their runtime's and launcher's I/O, which fit leaves out.
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "dlio/profile_fit.h"
#include "profile/analysis_test_util.h"
#include "profile/fit/fit_internal.h"
#include "profile/fit_test_util.h"
#include "profile/fit_whole_file_util.h"

namespace dlio {
namespace {

using fit_test::Fit;
using fit_test::LoadWhole;
using fit_test::ProbeEvery;
using fit_test::Value;
using testing::AddEvent;

TEST_CASE("fit: csv files loaded whole once per pass are pandas' stream of all their rows") {
  constexpr int64_t kSize = 1'000'000;
  ProfileTrace t;
  int64_t now = 1'000'000;
  for (int e = 0; e < 2; ++e) {
    for (int f = 0; f < 4; ++f) {
      now = LoadWhole(&t, 1, "/d/train/t" + std::to_string(f) + ".csv", kSize, now);
      now += 50'000;  // the batches over the file's rows: no I/O
    }
  }
  // rows of 2000 bytes of text
  const FitResult r = Fit(t, ProbeEvery("csv", kSize, 500, 2000, 2.5));
  CHECK(Value(r, "reader.io_model") == "pandas");
  // The reads at the end of each file (returning 0) do not start sample reads of their own.
  CHECK(r.Find("workflow.train")->reason.rfind("8 sample reads", 0) == 0);
  CHECK(Value(r, "dataset.num_samples_per_file") == "500");
  CHECK(Value(r, "dataset.record_length_bytes") == "800");  // 2000 bytes of text / 2.5
  CHECK(Value(r, "dataset.record_length_bytes_stdev") == "0");
  CHECK(Value(r, "reader.batch_size") == "500");  // one file's rows per burst
  CHECK(Value(r, "reader.reopen_files_each_epoch") == "true");
  CHECK(Value(r, "train.epochs") == "2");
  CHECK(r.Find("reader.transfer_size")->inferred == false);
  const std::string time = Value(r, "train.computation_time");
  CHECK(std::abs(std::stod(time) - 0.05) < 0.001);
}

TEST_CASE("fit: a burst longer than an epoch gives a batch of one epoch, not more") {
  constexpr int64_t kSize = 600'000;
  ProfileTrace t;
  int64_t now = 1'000'000;
  for (int e = 0; e < 4; ++e) {
    for (int f = 0; f < 4; ++f)
      now = LoadWhole(&t, 1, "/d/train/t" + std::to_string(f) + ".csv", kSize, now);
    if (e % 2 == 1) now += 50'000;  // a pause every second pass only
  }
  const FitResult r = Fit(t, ProbeEvery("csv", kSize, 500, 1200));
  CHECK(Value(r, "train.epochs") == "4");
  CHECK(Value(r, "reader.batch_size") == "2000");  // 8 loads x 500 rows, capped at 4 x 500
  CHECK(r.Find("reader.batch_size")->confidence == FitConfidence::kLow);
}

TEST_CASE("fit: pauses that split a pass unevenly are no step cap when every sample is read") {
  // np.load per sample in 16 files, two passes, no compute events. The pauses split each pass
  // into bursts of 2, 2, 2 and 10 loads (prefetching readers on a loaded machine): a batch of 2
  // in 4 steps, where 16 samples hold 8. Every sample is read in both passes, so no epoch was
  // stopped early.
  ProfileTrace t;
  int64_t now = 1'000'000;
  for (int pass = 0; pass < 2; ++pass) {
    int f = 0;
    for (int burst : {2, 2, 2, 10}) {
      for (int k = 0; k < burst; ++k, ++f) {
        const std::string path = "/d/train/s_" + std::to_string((f * 5 + pass) % 16) + ".npz";
        AddEvent(&t, 1, 1, "open64", now, 2, path);
        for (int64_t at = 0; at < 4 * 4096; at += 4096) {
          AddEvent(&t, 1, 1, "pread", now + 5 + at / 1000, 3, path, at, 4096, 4096);
        }
        AddEvent(&t, 1, 1, "close", now + 40, 1, path);
        now += 100;
      }
      now += 20'000;
    }
  }
  const FitResult r = Fit(t);
  CHECK(Value(r, "reader.batch_size") == "2");
  CHECK(r.Find("train.total_training_steps") == nullptr);
}

TEST_CASE("fit: tf.data threads re-created every pass count once, each file is its records") {
  constexpr int64_t kSize = 1'000'000;
  ProfileTrace t;
  int64_t now = 1'000'000;
  int32_t tid = 20;
  for (int e = 0; e < 2; ++e) {
    for (int th = 0; th < 2; ++th, ++tid) {  // a new pair of threads per pass
      int64_t at = now;
      for (int f = th; f < 4; f += 2) {
        at = LoadWhole(&t, tid, "/d/train/r" + std::to_string(f) + ".tfrecord", kSize, at);
      }
    }
    now += 100'000;
  }
  const FitResult r = Fit(t, ProbeEvery("tfrecord", kSize, 10, 99'000));
  CHECK(Value(r, "reader.io_model") == "tf.data");
  CHECK(Value(r, "reader.read_threads") == "2");
  CHECK(Value(r, "reader.reopen_files_each_epoch") == "true");
  CHECK(Value(r, "dataset.num_samples_per_file") == "10");
  CHECK(Value(r, "dataset.record_length_bytes") == "99000");
  CHECK(Value(r, "reader.batch_size") == "40");  // a burst reads all 4 files: 40 records
}

constexpr int64_t kVolumeFile = 2'104'504, kTable = 2'103'736, kPiece = 32768;

// h5py crops: 2 files kept open; per step a read in a 768-byte table at the file's end (from the
// row picked to the table's end, as the sieve buffer reads it), then one 32 KiB chunk.
struct Crops {
  int steps = 120;
  int table_reads_per_step = 1;
  bool repeat_chunks = true;  // chunks drawn with repeats (else each read once)
  bool table_after = false;   // the table read after the chunk (a label), not before
};

ProfileTrace BuildCrops(const Crops& c) {
  ProfileTrace t;
  std::mt19937 rng(3);
  int64_t now = 1'000'000;
  const std::string files[2] = {"/d/train/v0.h5", "/d/train/v1.h5"};
  for (const std::string& f : files) {
    AddEvent(&t, 1, 1, "open64", now, 2, f);
    for (int64_t size : {8, 16, 80, 512}) AddEvent(&t, 1, 1, "pread", now + 3, 1, f, 0, size, size);
    now += 20;
  }
  for (int s = 0; s < c.steps; ++s) {
    const std::string& f = files[rng() % 2];
    std::vector<int64_t> rows;
    for (int k = 0; k < c.table_reads_per_step; ++k)
      rows.push_back(static_cast<int64_t>(rng() % 64));
    const int64_t chunk = c.repeat_chunks ? static_cast<int64_t>(rng() % 8) : s;
    auto read_chunk = [&](int64_t when) {
      AddEvent(&t, 1, 1, "pread", when, 30, f, 2000 + chunk * kPiece, kPiece, kPiece);
    };
    if (c.table_after) read_chunk(now);
    int64_t at = c.table_after ? now + 40 : now;
    for (int64_t row : rows) {
      AddEvent(&t, 1, 1, "pread", at, 2, f, kTable + 12 * row, 768 - 12 * row, 768 - 12 * row);
      at += 10;
    }
    if (!c.table_after) read_chunk(at);
    now += 2'000;
  }
  return t;
}

TEST_CASE("fit: an hdf5 open per sample event is h5py.File per sample") {
  ProfileTrace t;
  int64_t now = 1'000'000;
  const std::string path = "/d/train/c.h5";
  for (int s = 0; s < 16; ++s) {
    AddEvent(&t, 1, 1, "ai.data.item", now, 300, path);
    AddEvent(&t, 1, 1, "open64", now + 1, 2, path);
    AddEvent(&t, 1, 1, "pread", now + 5, 5, path, 96, 512, 512);
    for (int c = 0; c < 3; ++c) {  // three chunks of the sample, not next to each other
      const int64_t at = 10'000 + (s * 7 + c * 3) % 40 * 2048;
      AddEvent(&t, 1, 1, "pread", now + 20 + c * 20, 10, path, at, 2048, 2048);
    }
    AddEvent(&t, 1, 1, "close", now + 100, 1, path);
    now += 5'000;
  }
  const FitResult r = Fit(t);
  CHECK(Value(r, "reader.io_model") == "h5py");
  CHECK(Value(r, "reader.h5py_reopen") == "file");
  CHECK(
      r.Find("reader.h5py_reopen")->reason.rfind("16 opens of the data files for 16 samples", 0) ==
      0);
}

// h5py.File per sample over a chunked file: every open reads the superblock, object headers
// and a B-tree node at the same offsets, then the sample's four 2 KiB chunks in B-tree order
// (not offset order). Two passes, marked by epoch events, read the samples in `orders`.
ProfileTrace BuildSessions(const std::array<std::vector<int>, 2>& orders) {
  ProfileTrace t;
  int64_t now = 1'000'000;
  const std::string path = "/d/train/v.h5";
  for (const std::vector<int>& order : orders) {
    AddEvent(&t, 1, 1, "ai.pipeline.epoch", now, 1);
    now += 10;
    for (int s : order) {
      AddEvent(&t, 1, 1, "open64", now, 2, path);
      AddEvent(&t, 1, 1, "pread", now + 5, 1, path, 0, 8, 8);
      AddEvent(&t, 1, 1, "pread", now + 10, 1, path, 96, 512, 512);
      AddEvent(&t, 1, 1, "pread", now + 15, 1, path, 1400, 2096, 2096);
      for (int c : {2, 0, 3, 1}) {
        AddEvent(&t, 1, 1, "pread", now + 20 + c * 10, 5, path, 10'000 + (s * 4 + c) * 2048, 2048,
                 2048);
      }
      AddEvent(&t, 1, 1, "close", now + 70, 1, path);
      now += 2'000;
    }
  }
  return t;
}

TEST_CASE("fit: samples read one open each are ordered by their data, not the shared headers") {
  const std::vector<int> sorted{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  const FitResult in_order = Fit(BuildSessions({sorted, sorted}));
  CHECK(Value(in_order, "reader.io_model") == "h5py");
  CHECK(Value(in_order, "reader.sample_shuffle") == "off");
  const FitResult shuffled =
      Fit(BuildSessions({std::vector<int>{7, 2, 10, 0, 5, 11, 3, 8, 1, 9, 4, 6},
                         std::vector<int>{3, 9, 0, 6, 11, 1, 8, 4, 10, 2, 7, 5}}));
  CHECK(Value(shuffled, "reader.sample_shuffle") == "seed");
}

// np.load per sample: every sample of a file reads the whole file, so only the interleaving of
// files shows a shuffle across them. Four files of three samples, in `files` order per pass.
ProfileTrace BuildLoads(const std::vector<int>& files) {
  ProfileTrace t;
  int64_t now = 1'000'000;
  for (int pass = 0; pass < 2; ++pass) {
    AddEvent(&t, 1, 1, "ai.pipeline.epoch", now, 1);
    now += 10;
    for (int f : files) {
      const std::string path = "/d/train/s_" + std::to_string(f) + ".npy";
      AddEvent(&t, 1, 1, "open64", now, 2, path);
      for (int64_t at = 0; at < 5 * 4096; at += 4096) {
        AddEvent(&t, 1, 1, "pread", now + 5 + at / 1000, 3, path, at, 4096, 4096);
      }
      AddEvent(&t, 1, 1, "close", now + 40, 1, path);
      now += 2'000;
    }
  }
  return t;
}

TEST_CASE("fit: whole-file loads per sample: the sample shuffle is the files' interleaving") {
  const FitResult grouped = Fit(BuildLoads({2, 2, 2, 0, 0, 0, 3, 3, 3, 1, 1, 1}));
  CHECK(Value(grouped, "reader.sample_shuffle") == "off");
  CHECK(grouped.Find("reader.sample_shuffle")->reason.find("whole-file loads") !=
        std::string::npos);
  const FitResult mixed = Fit(BuildLoads({2, 0, 3, 0, 1, 2, 3, 1, 0, 2, 1, 3}));
  CHECK(Value(mixed, "reader.sample_shuffle") == "seed");
}

// The probe takes the 64 x 12-byte table for the samples.
TEST_CASE("fit: chunk-sized h5py crops beside a table are chunked samples plus a lookup") {
  const FitResult r = Fit(BuildCrops({}), ProbeEvery("hdf5", kVolumeFile, 64, 12));
  CHECK(Value(r, "dataset.record_length_bytes") == "32768");
  CHECK(Value(r, "dataset.num_samples_per_file") == "64");  // kVolumeFile / kPiece
  CHECK(Value(r, "dataset.enable_chunking") == "true");
  CHECK(Value(r, "dataset.chunk_samples") == "1");
  CHECK(Value(r, "reader.io_model") == "h5py");
  // The same chunk read again while the file stays open: a new dataset object each time.
  CHECK(Value(r, "reader.h5py_reopen") == "dataset");
  // The table: reads from the row picked to the table's end, 768 bytes in 12-byte rows.
  CHECK(Value(r, "reader.hdf5_lookup_dataset") == "/lookup");
  CHECK(Value(r, "dataset.hdf5_lookup_rows") == "64");
  CHECK(Value(r, "dataset.hdf5_lookup_row_bytes") == "12");
  // Each open file's first read of the two is the table's: coordinates, then the crop.
  CHECK(Value(r, "reader.hdf5_lookup_order") == "before");
  CHECK(r.Find("reader.hdf5_lookup_order")->reason.find("in 2 of 2 opens") != std::string::npos);
  Crops labels;
  labels.table_after = true;
  const FitResult after = Fit(BuildCrops(labels), ProbeEvery("hdf5", kVolumeFile, 64, 12));
  CHECK(Value(after, "reader.hdf5_lookup_dataset") == "/lookup");
  CHECK(Value(after, "reader.hdf5_lookup_order") == "after");
}

TEST_CASE("fit: h5py reads that never repeat keep the dataset, two table reads are no lookup") {
  Crops c;
  c.repeat_chunks = false;
  c.table_reads_per_step = 2;
  const FitResult r = Fit(BuildCrops(c), ProbeEvery("hdf5", kVolumeFile, 64, 12));
  CHECK(Value(r, "reader.io_model") == "h5py");
  CHECK(Value(r, "reader.h5py_reopen") == "none");
  CHECK(r.Find("reader.hdf5_lookup_dataset")->inferred == false);
}

// One np.load-like sample read by a DataLoader worker process: open, 1 MiB in 4 KiB reads, close.
// Returns the time after it.
int64_t WorkerLoad(ProfileTrace* t, int32_t pid, int f, int64_t now) {
  const std::string path = "/d/train/s_" + std::to_string(f) + ".npz";
  AddEvent(t, pid, pid, "open64", now, 2, path);
  for (int64_t at = 0; at < 16 * 4096; at += 4096) {
    AddEvent(t, pid, pid, "pread", now + 5 + at / 1000, 3, path, at, 4096, 4096);
  }
  AddEvent(t, pid, pid, "close", now + 90, 1, path);
  return now + 100;
}

// Two passes of a DataLoader over `files` npz files, batch 4, 2 workers, shuffled: batch i goes
// to worker i % 2; the first 2 of each worker are sent when a pass starts (prefetch_factor 2),
// the others one at a time as the loop takes a batch (every 10 ms). Persistent workers keep
// their processes across passes; otherwise each pass has new ones.
ProfileTrace DataLoaderTrace(int files, bool persistent) {
  ProfileTrace t;
  int64_t now = 1'000'000;
  for (int pass = 0; pass < 2; ++pass) {
    std::array<int64_t, 2> at{now, now + 30};
    for (int batch = 0; batch < files / 4; ++batch) {
      const int w = batch % 2;
      const int32_t pid = 100 + w + (persistent ? 0 : 10 * pass);
      if (batch >= 4) at[w] = std::max(at[w], now + (batch - 3) * 10'000);  // sent when taken
      for (int k = 0; k < 4; ++k) {
        at[w] = WorkerLoad(&t, pid, ((batch * 4 + k) * 13 + pass * 3) % files, at[w]);
      }
    }
    now = std::max(at[0], at[1]) + 40'000;
  }
  return t;
}

TEST_CASE("fit: DataLoader workers forked per epoch, each reading its share in one burst") {
  // 16 files: each worker gets its 2 batches when the pass starts and reads 8 samples at once.
  const FitResult r = Fit(DataLoaderTrace(16, false));
  CHECK(Value(r, "reader.data_loader") == "pytorch");
  CHECK(Value(r, "reader.io_model") == "pytorch");
  CHECK(Value(r, "reader.read_threads") == "2");
  CHECK(Value(r, "reader.batch_size") == "4");
  CHECK(r.Find("reader.batch_size")->confidence == FitConfidence::kLow);
  CHECK(Value(r, "reader.persistent_workers") == "false");
}

TEST_CASE("fit: persistent DataLoader workers: a batch is one worker's burst after its first") {
  const FitResult r = Fit(DataLoaderTrace(64, true));
  CHECK(Value(r, "reader.io_model") == "pytorch");
  CHECK(Value(r, "reader.batch_size") == "4");
  CHECK(r.Find("reader.batch_size")->confidence == FitConfidence::kMedium);
  CHECK(Value(r, "reader.persistent_workers") == "true");
  // The worker processes are the pipeline: the fitted reader.pipeline says it is not used.
  REQUIRE(r.Find("reader.pipeline") != nullptr);
  CHECK(r.Find("reader.pipeline")
            ->reason.find("not used: DataLoader worker processes are the pipeline") !=
        std::string::npos);
}

TEST_CASE("fit: two bursts of DataLoader workers past their first are too few for a batch") {
  // 20 files: worker 0 reads a third batch in each pass, worker 1 none: 2 bursts past the first
  // in the run, which a busy host's stalls could make as well (session 33: 1 burst gave batch 4
  // beside 2 CPU hogs where the quiet run gave 1).
  const FitResult r = Fit(DataLoaderTrace(20, true));
  CHECK(Value(r, "reader.io_model") == "pytorch");
  CHECK_FALSE(r.Find("reader.batch_size")->inferred);
  CHECK(r.Find("reader.batch_size")->reason.find("only 2 bursts") != std::string::npos);
}

// The I/O of a program's runtime and launcher beside a DataLoader's (docs/profiling.md, "Runtime
// and launcher I/O"), one kind at a time: fit must give the workload it gives without it.
enum class Noise {
  kTempProbe,
  kUnknownCall,
  kLauncherSegment,
  kCountInMain,
  kMetadataInMain,
  kScratchFile
};

// A STDIO call on `path` at `at` (the category of an unknown call is its layer's).
void AddStdio(ProfileTrace* t, int32_t pid, std::string_view name, int64_t at,
              std::string_view path) {
  ProfileEvent e;
  e.pid = e.tid = pid;
  e.name = name;
  e.category = "STDIO";
  e.kind = OpKindOfCall(name);
  e.path = path;
  e.start_us = at;
  e.dur_us = 1;
  e.offset = 0;
  t->Add(e);
}

ProfileTrace WithNoise(ProfileTrace t, Noise noise) {
  std::map<int32_t, int64_t> first;                              // each worker's first event
  std::vector<std::tuple<int32_t, int64_t, std::string>> opens;  // data file opens: pid, time, path
  for (size_t i = 0; i < t.size(); ++i) {
    auto [it, fresh] = first.emplace(t.pid[i], t.start_us[i]);
    if (!fresh) it->second = std::min(it->second, t.start_us[i]);
    if (t.kind[i] == OpKind::kOpen && t.String(t.path[i]).rfind("/d/train/", 0) == 0)
      opens.emplace_back(t.pid[i], t.start_us[i], t.String(t.path[i]));
  }
  const int64_t start = std::min_element(first.begin(), first.end(), [](auto& a, auto& b) {
                          return a.second < b.second;
                        })->second;
  switch (noise) {
    case Noise::kTempProbe:  // Python's tempfile probe in each worker, unlinked untraced
      for (const auto& [pid, at] : first) {
        const std::string tmp = "/tmp/" + std::to_string(pid) + "q7x_zk";
        AddEvent(&t, pid, pid, "open64", at - 300, 5, tmp, -1, -1, 9);
        AddEvent(&t, pid, pid, "write", at - 290, 2, tmp, 0, 4, 4);
        AddEvent(&t, pid, pid, "close", at - 280, 1, tmp);
      }
      break;
    case Noise::kUnknownCall:  // each load: numpy.fromfile's fseeko64 and a call fit lacks
      for (const auto& [pid, at, path] : opens) {
        AddStdio(&t, pid, "fseeko64", at + 1, path);
        AddStdio(&t, pid, "fgetpos64", at + 2, path);
      }
      break;
    case Noise::kLauncherSegment: {  // Open MPI's shared-memory segment, mapped and touched
      const std::string seg = "/tmp/ompi.host.0/jf.0/0/sm_segment.host.0.0";
      AddEvent(&t, 1, 1, "open64", start - 900, 5, seg, -1, -1, 5);
      AddEvent(&t, 1, 1, "mmap", start - 890, 5, seg, 0, 1 << 22, 0);
      for (int k = 0; k < 20; ++k) {
        AddEvent(&t, 1, 1, "mmap.touched", start + k * 7'000, 0, seg, k * 4096, 4096, 4096);
      }
      break;
    }
    case Noise::kCountInMain:  // the main process opens each file for len(): its zip directory
      for (int f = 0; f < 16; ++f) {
        const std::string path = "/d/train/s_" + std::to_string(f) + ".npz";
        const int64_t at = start - 5'000 + f * 200;
        AddEvent(&t, 1, 1, "open64", at, 2, path, -1, -1, 3);
        AddEvent(&t, 1, 1, "fstat", at + 3, 1, path);
        AddEvent(&t, 1, 1, "pread", at + 5, 3, path, 16 * 4096 - 22, 22, 22);
        AddEvent(&t, 1, 1, "pread", at + 9, 3, path, 16 * 4096 - 200, 178, 178);
        AddEvent(&t, 1, 1, "close", at + 20, 1, path);
      }
      break;
    case Noise::kMetadataInMain:  // __init__ opens each file for its metadata (h5py.File and
      // attributes, fastMRI's SliceDataset): a dozen small reads, 12 KiB, a fifth of a sample
      for (int f = 0; f < 16; ++f) {
        const std::string path = "/d/train/s_" + std::to_string(f) + ".npz";
        const int64_t at = start - 9'000 + f * 400;
        AddEvent(&t, 1, 1, "open64", at, 2, path, -1, -1, 3);
        for (int k = 0; k < 12; ++k) {
          AddEvent(&t, 1, 1, "pread", at + 5 + k * 10, 3, path, k * 1024, 1024, 1024);
        }
        AddEvent(&t, 1, 1, "close", at + 200, 1, path);
      }
      break;
    case Noise::kScratchFile:  // a scratch file in the working folder, made and removed
      for (const auto& [pid, at] : first) {
        const std::string tmp = "/home/u/run/tmp" + std::to_string(pid) + "x";
        AddEvent(&t, pid, pid, "openat", at - 300, 5, tmp, -1, -1, 9);
        AddEvent(&t, pid, pid, "write", at - 290, 2, tmp, 0, 4, 4);
        AddEvent(&t, pid, pid, "close", at - 280, 1, tmp);
        AddEvent(&t, pid, pid, "unlink", at - 270, 4, tmp);
      }
      break;
  }
  return t;
}

// Every key fitted to `got` has the value (and inferredness) it has in `want`.
void CheckSameWorkload(const FitResult& want, const FitResult& got) {
  CHECK(got.data_files == want.data_files);
  for (const FitEntry& e : want.entries) {
    INFO(e.key);
    REQUIRE(got.Find(e.key) != nullptr);
    CHECK(got.Find(e.key)->value == e.value);
    CHECK(got.Find(e.key)->inferred == e.inferred);
  }
  CHECK(got.entries.size() == want.entries.size());
}

TEST_CASE("fit: the runtime's and launchers' I/O beside a DataLoader is no part of the workload") {
  // Workers forked per pass, as torch_npz_loader's: each runs tempfile's probe when it starts.
  const ProfileTrace clean = DataLoaderTrace(16, false);
  const FitResult want = Fit(clean);
  REQUIRE(Value(want, "workflow.checkpoint") == "false");
  REQUIRE(Value(want, "reader.read_threads") == "2");
  REQUIRE(Value(want, "dataset.num_samples_per_file") == "1");
  REQUIRE_FALSE(want.Find("side_io.read_file")->inferred);
  for (Noise noise : {Noise::kTempProbe, Noise::kUnknownCall, Noise::kLauncherSegment,
                      Noise::kCountInMain, Noise::kMetadataInMain, Noise::kScratchFile}) {
    INFO("noise " << static_cast<int>(noise));
    const FitResult got = Fit(WithNoise(clean, noise));
    CheckSameWorkload(want, got);
    CHECK(got.notes.size() > want.notes.size());  // what was left out is said
  }
  ProfileTrace all = clean;
  for (Noise noise : {Noise::kTempProbe, Noise::kUnknownCall, Noise::kLauncherSegment,
                      Noise::kCountInMain, Noise::kScratchFile}) {
    all = WithNoise(std::move(all), noise);
  }
  const FitResult got = Fit(all);
  CheckSameWorkload(want, got);
  std::string notes;
  for (const std::string& note : got.notes) notes += note + "\n";
  INFO(notes);
  CHECK(notes.find("fgetpos64 x32") != std::string::npos);  // the unknown call, counted
  CHECK(notes.find("1 threads opened, stat'ed or read only headers") != std::string::npos);
  CHECK(notes.find("5 scratch files") != std::string::npos);  // the workers' and main's
}

TEST_CASE("fit: --ignore-paths and --keep-scratch-files put the runtime's files back") {
  const ProfileTrace clean = DataLoaderTrace(16, false);
  FitOptions none;
  none.ignore_paths = {};
  // tempfile's probes written as the passes start: 4 files of 4 bytes, in 2 bursts.
  CHECK(Value(Fit(WithNoise(clean, Noise::kTempProbe), none), "workflow.checkpoint") == "true");
  FitOptions keep;
  keep.ignore_scratch_files = false;
  CHECK(Value(Fit(WithNoise(clean, Noise::kScratchFile), keep), "workflow.checkpoint") == "true");
  // A pattern of one's own: a side file left out beside the defaults.
  ProfileTrace side = clean;
  for (int k = 0; k < 8; ++k) {
    AddEvent(&side, 1, 1, "pread", 1'000'000 + k * 9'000, 5, "/d/cache/meta.bin", k * 100, 100,
             100);
  }
  CHECK(Value(Fit(side), "side_io.read_file") == "meta.bin");
  FitOptions mine;
  mine.ignore_paths = *ParseFitIgnorePaths("default,/d/cache/");
  CHECK(Fit(side, mine).Find("side_io.read_file")->inferred == false);
}

TEST_CASE("fit: a checkpoint a later save rotates out is no scratch file") {
  // Saves every 4th batch, each deleting the save before the last (a keep-2 rotation).
  ProfileTrace t = DataLoaderTrace(64, true);
  int64_t last = 0;
  for (size_t i = 0; i < t.size(); ++i) last = std::max(last, t.start_us[i]);
  for (int s = 0; s < 4; ++s) {
    const int64_t at = 1'000'000 + s * (last - 1'000'000) / 4 + 5'000;
    const std::string path = "/out/ckpt_" + std::to_string(s) + ".pt";
    AddEvent(&t, 1, 1, "openat", at, 5, path, -1, -1, 7);
    AddEvent(&t, 1, 1, "write", at + 10, 50, path, 0, 1 << 20, 1 << 20);
    AddEvent(&t, 1, 1, "close", at + 70, 1, path);
    if (s >= 2) {
      AddEvent(&t, 1, 1, "unlink", at + 80, 5, "/out/ckpt_" + std::to_string(s - 2) + ".pt");
    }
  }
  const FitResult r = Fit(t);
  CHECK(Value(r, "workflow.checkpoint") == "true");
  CHECK(r.Find("workflow.checkpoint")->reason.rfind("4 saves to 4 files", 0) == 0);
}

TEST_CASE("fit: --ignore-paths patterns: folders, whole paths, names, malformed ones refused") {
  using fit::MatchesIgnorePattern;
  CHECK(MatchesIgnorePattern("/proc/", "/proc/self/maps"));
  CHECK_FALSE(MatchesIgnorePattern("/proc/", "/procs/x"));
  CHECK(MatchesIgnorePattern("/tmp/*", "/tmp/q7x_zk"));
  CHECK_FALSE(MatchesIgnorePattern("/tmp/*", "/tmp/run/data/s_0.npz"));  // data under /tmp stays
  CHECK(MatchesIgnorePattern("ompi.*/", "/tmp/ompi.host.0/jf.0/0/sm_segment"));
  CHECK(MatchesIgnorePattern("ompi.*/", "/scratch/ompi.n1.1000/vader"));
  CHECK_FALSE(MatchesIgnorePattern("ompi.*/", "/data/ompi_run/x.npz"));
  CHECK(MatchesIgnorePattern("*.pyc", "/x/__pycache__/m.cpython-311.pyc"));
  CHECK(MatchesIgnorePattern("/home/*/.cache/", "/home/u/.cache/x/y"));
  for (const char* bad : {"", "/", "*", "*/", "a/b", "a/b/"}) {
    INFO("'" << bad << "'");
    CHECK_FALSE(CheckFitIgnorePattern(bad).ok());
  }
  CHECK(ParseFitIgnorePaths("").value().empty());
  CHECK(ParseFitIgnorePaths("default").value() == DefaultFitIgnorePaths());
  const auto two = ParseFitIgnorePaths("/scratch/locks/,*.lock");
  REQUIRE(two.ok());
  CHECK(*two == std::vector<std::string>{"/scratch/locks/", "*.lock"});
  const auto bad = ParseFitIgnorePaths("default,,x");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("empty") != std::string::npos);
  FitOptions options;
  options.ignore_paths = {"/"};
  CHECK_FALSE(FitTrace(DataLoaderTrace(16, false), options).ok());
}

}  // namespace
}  // namespace dlio
