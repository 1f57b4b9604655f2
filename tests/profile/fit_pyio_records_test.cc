// FitTrace's pyio rule for files of equal records read through a Python file each DataLoader
// worker keeps open (a map-style Dataset over CIFAR-10's binary batches: f.seek(i * 3073), then
// f.read(3073), whose buffer fill reads 4 KiB): io_model pyio over the records, each worker its
// own file objects. A C loader's preads of the records themselves, and Python's reads of records
// a whole buffer long, are what dlio's own reader makes, and stay native.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "dlio/profile_fit.h"
#include "profile/analysis_test_util.h"
#include "profile/fit_test_util.h"

namespace dlio {
namespace {

using fit_test::Fit;
using fit_test::Value;
using fit_test::WithPyioRequests;
using testing::AddEvent;

constexpr int kCifarFiles = 5;
constexpr int64_t kCifarRecords = 200;

std::string CifarBatchPath(int f) {
  return "/d/cifar-10-batches-bin/data_batch_" + std::to_string(f + 1) + ".bin";
}

// How each record is read: Python's seek then a buffered read of `request` bytes (the fill),
// or (seek false) a C loop's pread of `request` bytes at the record.
struct CifarRecordReads {
  int64_t record = 3073;
  int64_t request = 4096;
  bool seek = true;
};

// Two epochs of two DataLoader workers each, forked per epoch; every record of every file is read
// once per epoch in a shuffled order, each worker opening a file the first time it needs it.
ProfileTrace CifarRecords(const CifarRecordReads& how) {
  ProfileTrace t;
  int64_t at = 1'000'000;
  const int64_t total = kCifarFiles * kCifarRecords;
  const int64_t size = kCifarRecords * how.record;
  for (int e = 0; e < 2; ++e) {
    std::vector<bool> opened(2 * kCifarFiles, false);
    for (int64_t k = 0; k < total; ++k, at += 600) {
      const int64_t i = (k * 7 + 3 + e * 11) % total;  // 7 is coprime with 1000
      const int w = static_cast<int>(k / 32 % 2);      // batches of 32 alternate between workers
      const int32_t pid = 100 * (e + 1) + w;
      const int f = static_cast<int>(i / kCifarRecords);
      const int64_t o = i % kCifarRecords * how.record;
      const std::string path = CifarBatchPath(f);
      if (!opened[static_cast<size_t>(w * kCifarFiles + f)]) {
        opened[static_cast<size_t>(w * kCifarFiles + f)] = true;
        AddEvent(&t, pid, pid, "open64", at, 3, path, -1, -1, 7);
        AddEvent(&t, pid, pid, "fstat64", at + 4, 1, path);
        AddEvent(&t, pid, pid, "lseek64", at + 6, 1, path, 0, -1, 0);
        at += 10;
      }
      if (how.seek) AddEvent(&t, pid, pid, "lseek64", at, 1, path, o, -1, o);
      AddEvent(&t, pid, pid, how.seek ? "read" : "pread64", at + 3, 5, path, o, how.request,
               std::min(how.request, size - o));
    }
    at += 200'000;
  }
  return t;
}

TEST_CASE("fit: records read after a seek through Python's buffer are pyio records") {
  const FitResult r = Fit(CifarRecords({}), WithPyioRequests());
  INFO(r.Find("reader.io_model")->reason);
  CHECK(Value(r, "dataset.format") == "raw");
  CHECK(Value(r, "reader.io_model") == "pyio");
  CHECK(Value(r, "reader.pyio_call") == "read");
  CHECK(r.Find("reader.io_model")->reason.find("3073-byte records") != std::string::npos);
  // Each worker's file objects keep their own buffers: worker processes, not shared threads.
  CHECK(Value(r, "reader.loader") == "pytorch_workers");
  CHECK(Value(r, "dataset.num_samples_per_file") == std::to_string(kCifarRecords));
  CHECK(Value(r, "dataset.record_length_bytes") == "3073");
  CHECK(r.Find("reader.pyio_head_bytes") == nullptr);
}

TEST_CASE("fit: records read as they are stored stay with dlio's own reader") {
  // A C loader's pread of each record: no seek, and the request is the record.
  FitResult r = Fit(CifarRecords({3073, 3073, false}), WithPyioRequests());
  INFO(r.Find("reader.io_model")->reason);
  CHECK(Value(r, "reader.io_model") != "pyio");
  // Python's reads of records a whole buffer long: a seek, then one read of the record itself,
  // which dlio's own reader requests too.
  r = Fit(CifarRecords({8192, 8192, true}), WithPyioRequests());
  INFO(r.Find("reader.io_model")->reason);
  CHECK(Value(r, "reader.io_model") != "pyio");
}

}  // namespace
}  // namespace dlio
