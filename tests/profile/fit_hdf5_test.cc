// FitTrace on a hand-built trace of h5py read by DataLoader workers that each open the file once
// (the documented lazy open in __getitem__), over a dataset of gzip-compressed chunks of one
// sample each beside a labels table read per sample: what fit makes of the opens, the table, the
// chunks and their stored (compressed) sizes.
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

constexpr int kSamples = 256;
constexpr int64_t kStoredChunk = 16'000;                     // a sample's chunk as gzip stored it
constexpr int64_t kChunksAt = 4'096;                         // where the chunks begin
constexpr int64_t kTableAt = kChunksAt + kSamples * 16'100;  // 256 int64 labels after them
constexpr int64_t kFileSize = kTableAt + kSamples * 8;
const std::string kPath = "/d/images.h5";

// Two passes; in each, two worker processes (new ones per pass) open the file once, read its
// metadata, then take turns on batches of 8 samples in a shuffled order: per sample, a chunk
// index node now and then (libhdf5's metadata cache lets it go), the chunk, and the labels table
// from the sample's row to its end (a new dataset object each time: the sieve buffer is empty).
ProfileTrace WorkersOpeningOnce() {
  ProfileTrace t;
  int64_t now = 1'000'000;
  for (int pass = 0; pass < 2; ++pass) {
    for (int w = 0; w < 2; ++w) {
      const int32_t pid = 100 + 10 * pass + w;
      AddEvent(&t, pid, pid, "open64", now + w * 50, 2, kPath);
      AddEvent(&t, pid, pid, "pread", now + w * 50 + 5, 1, kPath, 0, 8, 8);
      AddEvent(&t, pid, pid, "pread", now + w * 50 + 8, 1, kPath, 96, 512, 512);
    }
    now += 1'000;
    for (int k = 0; k < kSamples; ++k) {
      const int s = (k * 97 + pass * 31) % kSamples;  // a shuffle
      const int32_t pid = 100 + 10 * pass + (k / 8) % 2;
      if (k % 3 == 0) AddEvent(&t, pid, pid, "pread", now, 4, kPath, 1'400, 3'136, 3'136);
      const int64_t chunk = kStoredChunk + (s * 37) % 120;
      AddEvent(&t, pid, pid, "pread", now + 10, 20, kPath, kChunksAt + s * 16'100, chunk, chunk);
      const int64_t row = kTableAt + s * 8;
      AddEvent(&t, pid, pid, "pread", now + 40, 3, kPath, row, kFileSize - row, kFileSize - row);
      now += k % 8 == 7 ? 6'000 : 80;  // a step after each batch of 8
    }
    now += 50'000;
  }
  return t;
}

// The probe of the file: 65536-byte samples, one a chunk, kept at about a quarter by gzip; with
// `ratio_writer`, a format whose writer makes chunks of a chosen compression ratio.
FitOptions CompressedChunks(bool ratio_writer = false) {
  DataFileInfo info;
  info.format = "hdf5";
  info.size = kFileSize;
  info.samples = kSamples;
  info.stored_fraction = 0.245;
  info.sample_sizes.assign(kSamples, 65'536);
  info.data_bytes = int64_t{65'536} * kSamples;
  info.samples_per_chunk = 1;
  info.compression = "gzip";
  info.compression_level = 4;
  info.compressed_units = kSamples;
  info.compressed_unit_bytes = 65'536;
  info.stored_unit_mean = 16'050;
  info.stored_unit_stdev = 35;
  info.writes_compression_ratio = ratio_writer;
  return fit_test::ProbingAs(std::move(info));
}

TEST_CASE("fit: one h5py.File per DataLoader worker is no open per sample") {
  const FitResult r = Fit(WorkersOpeningOnce(), CompressedChunks());
  CHECK(Value(r, "reader.data_loader") == "pytorch");
  CHECK(Value(r, "reader.io_model") == "pytorch");
  CHECK(r.request_model == "h5py");
  // 4 opens (2 workers x 2 passes) for 512 sample reads: the file stays open in each worker; the
  // table read from the row picked to its end for every sample shows a new dataset object each.
  CHECK(Value(r, "reader.h5py_reopen") == "dataset");
  CHECK(Value(r, "reader.hdf5_lookup_dataset") == "/lookup");
  CHECK(Value(r, "dataset.hdf5_lookup_rows") == "256");
  CHECK(Value(r, "dataset.hdf5_lookup_row_bytes") == "8");
  CHECK(Value(r, "reader.sample_shuffle") == "seed");
}

TEST_CASE("fit: gzip-compressed chunks of one sample are records of the stored size, chunked") {
  const FitResult r = Fit(WorkersOpeningOnce(), CompressedChunks());
  // dlio's generated records do not compress: records of the stored size make the same reads.
  CHECK(Value(r, "dataset.record_length_bytes") == "16056");
  CHECK(r.Find("dataset.record_length_bytes")->reason.find("compressed in the files to 25%") !=
        std::string::npos);
  CHECK(Value(r, "dataset.enable_chunking") == "true");
  CHECK(Value(r, "dataset.chunk_samples") == "1");
  CHECK(Value(r, "dataset.num_samples_per_file") == "256");
}

TEST_CASE("fit: gzip chunks a writer can compress as much are records of their own size") {
  const FitResult r = Fit(WorkersOpeningOnce(), CompressedChunks(true));
  CHECK(Value(r, "dataset.record_length_bytes") == "65536");
  CHECK(Value(r, "dataset.compression") == "gzip");
  CHECK(Value(r, "dataset.compression_level") == "4");
  CHECK(Value(r, "dataset.enable_chunking") == "true");
  CHECK(Value(r, "dataset.chunk_samples") == "1");
  // 65536 / 16050, and the stored sizes' spread as one of the ratio: 65536 x 35 / 16050^2.
  CHECK(Value(r, "dataset.compression_ratio") == "4.0832");
  CHECK(Value(r, "dataset.compression_ratio_stdev") == "0.0089");
}

TEST_CASE("fit: h5py.File per sample by each worker is still an open per sample") {
  // The same loop, but every sample opens the file: one sample read after each open.
  ProfileTrace t;
  int64_t now = 1'000'000;
  for (int k = 0; k < 64; ++k) {
    const int32_t pid = 100 + (k / 8) % 2;
    AddEvent(&t, pid, pid, "open64", now, 2, kPath);
    AddEvent(&t, pid, pid, "pread", now + 5, 1, kPath, 0, 8, 8);
    AddEvent(&t, pid, pid, "pread", now + 8, 1, kPath, 96, 512, 512);
    AddEvent(&t, pid, pid, "pread", now + 10, 4, kPath, 1'400, 3'136, 3'136);
    const int s = (k * 29) % kSamples;
    AddEvent(&t, pid, pid, "pread", now + 20, 20, kPath, kChunksAt + s * 16'100, kStoredChunk,
             kStoredChunk);
    AddEvent(&t, pid, pid, "close", now + 50, 1, kPath);
    now += k % 8 == 7 ? 6'000 : 100;
  }
  const FitResult r = Fit(t, CompressedChunks());
  CHECK(r.request_model == "h5py");
  CHECK(Value(r, "reader.h5py_reopen") == "file");
}

}  // namespace
}  // namespace dlio
