// FitTrace over hdf5 files the probe describes as a group or a dataset per sample with a table
// beside the samples (dataset.hdf5_sample_groups among the writer keys, with
// reader.hdf5_lookup_dataset): h5py reads them, and the table the probe found is fitted once,
// not also written off as libhdf5's walk of the groups.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>

#include "dlio/profile_fit.h"
#include "profile/analysis_test_util.h"
#include "profile/fit_test_util.h"

namespace dlio {
namespace {

using fit_test::Fit;
using fit_test::Value;
using testing::AddEvent;

constexpr int64_t kFlatH5Samples = 64;
constexpr int64_t kFlatH5Image = 12288;
const char* const kFlatH5Path = "/d/train.h5";

// Two epochs of two DataLoader workers, each opening the file once and reading every other
// sample as h5py does under `f[str(i)][()]; f['labels'][i]`: the name's B-tree node, the
// dataset's object header, its data, then the labels from the row to the table's end.
ProfileTrace FlatH5Trace() {
  ProfileTrace t;
  int64_t at = 1'000'000;
  const int64_t table = kFlatH5Samples * (kFlatH5Image + 1024);
  for (int e = 0; e < 2; ++e) {
    for (int w = 0; w < 2; ++w) {
      const int32_t pid = 100 * (e + 1) + w;
      AddEvent(&t, pid, pid, "open64", at, 5, kFlatH5Path, -1, -1, 9);
      for (int64_t k = 0; k < kFlatH5Samples / 2; ++k, at += 900) {
        const int64_t i = (k * 2 + w + e * 7) % kFlatH5Samples;
        AddEvent(&t, pid, pid, "pread64", at, 2, kFlatH5Path, 136, 544, 544);
        AddEvent(&t, pid, pid, "pread64", at + 5, 2, kFlatH5Path, i * (kFlatH5Image + 1024), 328,
                 328);
        AddEvent(&t, pid, pid, "pread64", at + 10, 9, kFlatH5Path, i * (kFlatH5Image + 1024) + 1024,
                 kFlatH5Image, kFlatH5Image);
        AddEvent(&t, pid, pid, "pread64", at + 25, 2, kFlatH5Path, table + i * 8,
                 (kFlatH5Samples - i) * 8, (kFlatH5Samples - i) * 8);
        if (k % 8 == 7) at += 20'000;  // a batch of 8 taken
      }
    }
    at += 100'000;
  }
  return t;
}

TEST_CASE("fit: a dataset per sample with a labels table is read by h5py, the table fitted once") {
  FitOptions options;
  options.probe = [](const std::string&) -> Result<DataFileInfo> {
    DataFileInfo info;
    info.format = "hdf5";
    info.size = kFlatH5Samples * (kFlatH5Image + 1024) + kFlatH5Samples * 8;
    info.samples = kFlatH5Samples;
    info.sample_sizes.assign(kFlatH5Samples, kFlatH5Image);
    info.writer_keys = {{"dataset.hdf5_sample_groups", "\"{}\""},
                        {"dataset.hdf5_sample_members", ""},
                        {"dataset.hdf5_lookup_rows", "64"},
                        {"dataset.hdf5_lookup_row_bytes", "8"},
                        {"reader.hdf5_lookup_dataset", "/lookup"}};
    return info;
  };
  const FitResult r = Fit(FlatH5Trace(), options);
  CHECK(Value(r, "dataset.hdf5_sample_members") == "");
  CHECK(Value(r, "dataset.hdf5_lookup_rows") == "64");
  CHECK(Value(r, "reader.hdf5_lookup_dataset") == "/lookup");
  size_t lookup_entries = 0;
  for (const FitEntry& e : r.entries) lookup_entries += e.key == "reader.hdf5_lookup_dataset";
  CHECK(lookup_entries == 1);
  INFO(r.Find("reader.io_model")->reason);
  CHECK(r.Find("reader.io_model")->reason.find("a group or a dataset per sample") !=
        std::string::npos);
}

}  // namespace
}  // namespace dlio
