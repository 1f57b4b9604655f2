// FitTrace on a hand-built trace of a file read in pages with a mark at each sample: SQLite
// BLOB rows SELECTed one per sample by DataLoader workers that each connect once (the file
// change counter, 16 bytes at offset 24, read as each read transaction begins; a B-tree leaf
// shared by 8 rows; each row's overflow pages, contiguous). Every read is at most 4 KiB: the
// marks must begin the sample reads, the pages be their data, and the last page name the sample,
// so that passes, readers and batches come out as the program's.
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

constexpr int kRows = 96;
constexpr int64_t kPage = 4'096;
constexpr int64_t kChainPages = 6;
const std::string kPagedPath = "/d/samples.db";

// Row r's leaf page (8 rows a leaf, after page 1) and its overflow chain (after the leaves).
int64_t LeafOf(int r) { return (1 + r / 8) * kPage; }
int64_t ChainOf(int r) { return (1 + kRows / 8 + r * kChainPages) * kPage; }

// One SELECT: the mark, the row's leaf unless it was read just before, its chain.
void AddSelect(ProfileTrace* t, int32_t pid, int row, bool leaf, int64_t* now) {
  AddEvent(t, pid, pid, "pread64", *now, 1, kPagedPath, 24, 16, 16);
  *now += 3;
  if (leaf) {
    AddEvent(t, pid, pid, "pread64", *now, 2, kPagedPath, LeafOf(row), kPage, kPage);
    *now += 3;
  }
  for (int64_t p = 0; p < kChainPages; ++p) {
    AddEvent(t, pid, pid, "pread64", *now, 2, kPagedPath, ChainOf(row) + p * kPage, kPage, kPage);
    *now += 3;
  }
}

// Two passes; in each, two new worker processes connect (the header, then page 1, the schema)
// and take turns on batches of 12 rows in a shuffled order, a 5 ms wait after each batch.
ProfileTrace WorkersSelecting() {
  ProfileTrace t;
  int64_t now = 1'000'000;
  for (int pass = 0; pass < 2; ++pass) {
    for (int w = 0; w < 2; ++w) {
      const int32_t pid = 100 + 10 * pass + w;
      AddEvent(&t, pid, pid, "open64", now, 2, kPagedPath);
      AddEvent(&t, pid, pid, "pread64", now + 5, 1, kPagedPath, 0, 100, 100);
      AddEvent(&t, pid, pid, "pread64", now + 8, 1, kPagedPath, 0, kPage, kPage);
      now += 20;
    }
    for (int k = 0; k < kRows; ++k) {
      const int row = (k * 29 + pass * 7) % kRows;
      AddSelect(&t, 100 + 10 * pass + (k / 12) % 2, row, k % 3 != 0, &now);
      now += k % 12 == 11 ? 5'000 : 20;
    }
    now += 50'000;
  }
  return t;
}

FitOptions ProbedDatabase() {
  DataFileInfo info;
  info.format = "sqlite";
  info.size = ChainOf(kRows);
  info.samples = kRows;
  info.sample_sizes.assign(kRows, kChainPages * kPage);
  info.data_bytes = kRows * kChainPages * kPage;
  return fit_test::ProbingAs(std::move(info));
}

TEST_CASE("fit: pages read after a mark per sample are one sample read each") {
  const FitResult r = Fit(WorkersSelecting(), ProbedDatabase());
  CHECK(Value(r, "dataset.format") == "sqlite");
  CHECK(Value(r, "dataset.num_samples_per_file") == std::to_string(kRows));
  CHECK(Value(r, "train.epochs") == "2");
  CHECK(Value(r, "reader.read_threads") == "2");
  CHECK(Value(r, "reader.io_model") == "pytorch");
  CHECK(Value(r, "reader.persistent_workers") == "false");
  CHECK(Value(r, "reader.batch_size") == "12");
  CHECK(Value(r, "reader.sample_shuffle") == "seed");
}

TEST_CASE("fit: small records read whole, with no recurring mark, stay one sample each") {
  // 2 KiB records of a flat file, one pread each: no read recurs at one offset, so there is no
  // mark and every read is a sample read, as before.
  ProfileTrace t;
  int64_t now = 1'000'000;
  const std::string path = "/d/records.bin";
  AddEvent(&t, 7, 7, "open64", now, 2, path);
  for (int pass = 0; pass < 2; ++pass) {
    for (int k = 0; k < 64; ++k) {
      AddEvent(&t, 7, 7, "pread64", now, 2, path, ((k * 5 + pass) % 64) * 2'048, 2'048, 2'048);
      now += k % 8 == 7 ? 4'000 : 30;
    }
    now += 30'000;
  }
  const FitResult r = Fit(t);
  CHECK(Value(r, "train.epochs") == "2");
  CHECK(Value(r, "reader.batch_size") == "8");
}

}  // namespace
}  // namespace dlio
