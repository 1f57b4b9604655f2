// FitTrace on a hand-built trace of random access into one tar by DataLoader workers that each
// open it once (tarfile.open(path) in __getitem__, then extractfile(name).read() per sample):
// tarfile's three compression probes, its member index (a 4 KiB read one byte before each
// header), the members read by offset. fit must take the probes for no samples, the index reads
// for tarfile's random access (io_model tarfile_index, read by worker processes of their own),
// the batch from each worker's pauses, and the member extensions from the probed file.
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

constexpr int kTarSamples = 120;
constexpr int64_t kMember = 20'480;
constexpr int64_t kStride = 512 + kMember;  // a header and its member
constexpr int64_t kTarFileSize = kTarSamples * kStride + 10'240;
const std::string kTarPath = "/d/samples.tar";

// One worker's open of the tar as tarfile.open(path) makes it: three probes (open, a read at 0,
// close), then the archive's open and its first header, and, at the first extractfile, the
// index: per later header a 4 KiB read one byte before it.
void AddOpenAndIndex(ProfileTrace* t, int32_t pid, int64_t* now) {
  for (const int64_t n : {4'096, 8'192, 8'192}) {
    AddEvent(t, pid, pid, "open64", *now, 2, kTarPath);
    AddEvent(t, pid, pid, "read", *now + 5, 2, kTarPath, 0, n, n);
    AddEvent(t, pid, pid, "close", *now + 9, 1, kTarPath);
    *now += 20;
  }
  AddEvent(t, pid, pid, "open64", *now, 2, kTarPath);
  AddEvent(t, pid, pid, "read", *now + 5, 2, kTarPath, 0, 4'096, 4'096);
  *now += 10;
  for (int k = 1; k <= kTarSamples; ++k) {
    AddEvent(t, pid, pid, "read", *now, 2, kTarPath, k * kStride - 1, 4'096, 4'096);
    *now += 4;
  }
}

// Two passes; in each, two new worker processes take turns on batches of 6 samples in a
// shuffled order, each sample a seek and one read of its member; a 5 ms wait for the training
// loop after each batch.
ProfileTrace WorkersIndexingOnce() {
  ProfileTrace t;
  int64_t now = 1'000'000;
  for (int pass = 0; pass < 2; ++pass) {
    for (int w = 0; w < 2; ++w) AddOpenAndIndex(&t, 100 + 10 * pass + w, &now);
    now += 1'000;
    for (int k = 0; k < kTarSamples; ++k) {
      const int s = (k * 37 + pass * 11) % kTarSamples;  // a shuffle
      const int32_t pid = 100 + 10 * pass + (k / 6) % 2;
      AddEvent(&t, pid, pid, "read", now, 6, kTarPath, s * kStride + 512, kMember, kMember);
      now += k % 6 == 5 ? 5'000 : 30;
    }
    now += 50'000;
  }
  return t;
}

FitOptions ProbedTar() {
  DataFileInfo info;
  info.format = "webdataset";
  info.size = kTarFileSize;
  info.samples = kTarSamples;
  info.sample_sizes.assign(kTarSamples, kMember);
  info.data_bytes = kMember * kTarSamples;
  info.writer_keys = {{"dataset.webdataset_members", "bin"}};
  FitOptions options = fit_test::ProbingAs(std::move(info));
  // What `dlio-run fit` asks the registry: webdataset reads under auto (and so under io_model
  // pytorch) with tarfile's stream.
  options.io_model_under_auto = [](const std::string&) { return std::string("tarfile"); };
  return options;
}

TEST_CASE("fit: tarfile's random access in DataLoader workers that open the tar once") {
  const FitResult r = Fit(WorkersIndexingOnce(), ProbedTar());
  CHECK(Value(r, "dataset.format") == "webdataset");
  CHECK(Value(r, "dataset.num_samples_per_file") == std::to_string(kTarSamples));
  CHECK(Value(r, "dataset.record_length_bytes") == std::to_string(kMember));
  CHECK(Value(r, "dataset.webdataset_members") == "bin");
  CHECK(Value(r, "reader.io_model") == "tarfile_index");
  CHECK_THAT(r.Find("reader.io_model")->reason,
             Catch::Contains("one byte before a 512-byte tar block"));
  // Each worker loads its own index: worker processes, not threads sharing one.
  CHECK(Value(r, "reader.loader") == "pytorch_workers");
  CHECK(Value(r, "reader.read_threads") == "2");
  CHECK(Value(r, "reader.persistent_workers") == "false");
  // The probes are no sample reads: the batch is each worker's 6, not shifted by them.
  CHECK(Value(r, "reader.batch_size") == "6");
  CHECK(Value(r, "reader.sample_shuffle") == "seed");
  CHECK(Value(r, "train.epochs") == "2");
  // The loop's step from each worker's batches: one every 2 x (5 x 30 us + 5 ms), two workers.
  CHECK(std::stod(Value(r, "train.computation_time")) == Approx(0.00515).epsilon(0.01));
  CHECK_THAT(r.Find("train.computation_time")->reason,
             Catch::Contains("each of the 2 DataLoader worker processes"));
}

TEST_CASE("fit: a sample read at offset 0 twice in a row by one process is no probe") {
  // One process opens a flat file per sample (np.fromfile(path, offset=...)): sample 0 is at
  // offset 0; read once per pass, it is never two probes in a row, and every read counts.
  ProfileTrace t;
  int64_t now = 1'000'000;
  const std::string path = "/d/records.bin";
  for (int pass = 0; pass < 2; ++pass) {
    for (int k = 0; k < 64; ++k) {
      const int s = (k * 5 + pass) % 64;
      AddEvent(&t, 7, 7, "open64", now, 2, path);
      AddEvent(&t, 7, 7, "read", now + 4, 3, path, s * 16'384, 16'384, 16'384);
      AddEvent(&t, 7, 7, "close", now + 9, 1, path);
      now += k % 4 == 3 ? 3'000 : 40;
    }
    now += 20'000;
  }
  const FitResult r = Fit(t);
  CHECK(Value(r, "reader.io_model") != "tarfile_index");
  CHECK(Value(r, "train.epochs") == "2");
  CHECK(Value(r, "reader.batch_size") == "4");
}

}  // namespace
}  // namespace dlio
