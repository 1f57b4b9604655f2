// FitTrace on a hand-built trace of fastMRI's SliceDataset: h5py.File per sample, reading the
// slice of `kspace` (libhdf5's 64 KiB sieve buffer from the slice), the same slice of a second
// dataset, `reconstruction_esc` (the sieve from its row to its end), and the string attributes'
// global heap (4 KiB past both). What fit makes of the second dataset and the heap, with the
// probe's table of a row per sample and sample extent, and without them; the root's attributes
// the probe found, and whether each open reads them; the main process's opens of every volume
// before the workers begin (the Dataset's __init__ counting slices).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <utility>

#include "dlio/profile_fit.h"
#include "profile/analysis_test_util.h"
#include "profile/fit_test_util.h"

namespace dlio {
namespace {

using fit_test::Fit;
using fit_test::Value;
using testing::AddEvent;

constexpr int kVolumes = 8;
constexpr int kSlices = 12;
constexpr int64_t kSliceBytes = 32'768;                          // 64 x 64 complex64
constexpr int64_t kReconRow = 4'096;                             // 32 x 32 float32
constexpr int64_t kKspaceAt = 2'048;                             // where the slices begin
constexpr int64_t kReconAt = kKspaceAt + kSlices * kSliceBytes;  // the table after them
constexpr int64_t kHeapAt = kReconAt + kSlices * kReconRow;      // the attributes' strings
constexpr int64_t kVolumeBytes = kHeapAt + 4'096;
constexpr int64_t kSieve = 65'536;

std::string VolumePath(int v) {
  return "/d/singlecoil_train/file" + std::to_string(1000 + v) + ".h5";
}

// One sample: the open's metadata, the slice, the table's header and row (`table_first`: the row
// before the slice), the heap (`heap`: dict(hf.attrs)), the close.
int64_t ReadSlice(ProfileTrace* t, int32_t pid, int v, int s, int64_t now, bool heap,
                  bool table_first) {
  const std::string path = VolumePath(v);
  AddEvent(t, pid, pid, "open64", now, 2, path);
  int64_t at = now + 5;
  for (const auto& [offset, size] : {std::pair<int64_t, int64_t>{0, 8},
                                     {96, 512},
                                     {1'672, 312},
                                     {680, 512},
                                     {136, 544},
                                     {800, 512}}) {
    AddEvent(t, pid, pid, "pread", at, 1, path, offset, size, size);
    at += 3;
  }
  const int64_t slice = kKspaceAt + s * kSliceBytes;
  const int64_t sieve = std::min(kSieve, kReconAt - slice);
  const int64_t row = kReconAt + s * kReconRow;
  const int64_t rest = std::min(kSieve, kHeapAt - row);
  const int64_t slice_at = table_first ? at + 30 : at, row_at = table_first ? at : at + 30;
  AddEvent(t, pid, pid, "pread", slice_at, 20, path, slice, sieve, sieve);
  AddEvent(t, pid, pid, "pread", at + 25, 1, path, 1'400, 512, 512);
  AddEvent(t, pid, pid, "pread", row_at, 5, path, row, rest, rest);
  if (heap) AddEvent(t, pid, pid, "pread", at + 40, 2, path, kHeapAt, 4'096, 4'096);
  AddEvent(t, pid, pid, "close", at + 45, 1, path);
  return at + 50;
}

// SliceDataset's __init__ in the main process (pid 50): h5py.File of each of the first
// `volumes` volumes, its metadata, `kspace`'s shape (in that metadata) and dict(hf.attrs).
int64_t CountSlices(ProfileTrace* t, int volumes, int64_t now) {
  for (int v = 0; v < volumes; ++v) {
    const std::string path = VolumePath(v);
    AddEvent(t, 50, 50, "open64", now, 2, path);
    int64_t at = now + 5;
    for (const auto& [offset, size] : {std::pair<int64_t, int64_t>{0, 8},
                                       {96, 512},
                                       {1'672, 312},
                                       {680, 512},
                                       {kHeapAt, 4'096}}) {
      AddEvent(t, 50, 50, "pread", at, 1, path, offset, size, size);
      at += 3;
    }
    AddEvent(t, 50, 50, "close", at, 1, path);
    now = at + 10;
  }
  return now;
}

// Two passes of every slice of every volume in a shuffled order, by two DataLoader workers (new
// ones per pass) taking turns on batches of 4, a 6 ms step after each batch; `counted` volumes
// opened by the main process first (CountSlices).
ProfileTrace SliceDatasetLoop(bool heap = true, bool table_first = false, int counted = 0) {
  ProfileTrace t;
  int64_t now = CountSlices(&t, counted, 1'000'000) + 20'000;
  constexpr int kAll = kVolumes * kSlices;
  for (int pass = 0; pass < 2; ++pass) {
    for (int k = 0; k < kAll; ++k) {
      const int i = (k * 37 + pass * 11) % kAll;  // a shuffle (37 is prime to 96)
      const int32_t pid = 100 + 10 * pass + (k / 4) % 2;
      now = ReadSlice(&t, pid, i / kSlices, i % kSlices, now, heap, table_first) + 20;
      if (k % 4 == 3) now += 6'000;
    }
    now += 50'000;
  }
  return t;
}

constexpr const char* kAttributes =
    "@acquisition:scalar:str9,@max:scalar:fp64,@norm:scalar:fp64,@patient_id:scalar:str3";

// The probe of a volume: the slices as samples; with `layout`, where they lie and the table of
// a row per sample beside them (hdf5's description of a rows layout); with `attributes`, the
// root's attributes and the heap read reading them.
FitOptions Volumes(bool layout, bool attributes = false) {
  DataFileInfo info;
  info.format = "hdf5";
  info.size = kVolumeBytes;
  info.samples = kSlices;
  info.sample_sizes.assign(kSlices, kSliceBytes);
  info.data_bytes = kSlices * kSliceBytes;
  if (layout) {
    info.sample_extent = {kKspaceAt, kSlices * kSliceBytes};
    info.row_tables.push_back({{kReconAt, kSlices * kReconRow}, kReconRow});
  }
  if (attributes) {
    info.root_attributes = kAttributes;
    info.attribute_reads.push_back({kHeapAt, 4'096});
  }
  return fit_test::ProbingAs(std::move(info));
}

TEST_CASE("fit, hdf5 tables: a second dataset read at each slice is /lookup's row") {
  const FitResult r = Fit(SliceDatasetLoop(), Volumes(true));
  CHECK(r.request_model == "h5py");
  CHECK(Value(r, "reader.h5py_reopen") == "file");
  // The table's reads and the heap's are no samples of their own: one sample read per open.
  CHECK(Value(r, "reader.hdf5_lookup_dataset") == "/lookup");
  INFO(r.Find("reader.hdf5_lookup_dataset")->reason);
  CHECK(r.Find("reader.hdf5_lookup_dataset")->reason.find("192 reads within a table") !=
        std::string::npos);
  CHECK(Value(r, "dataset.hdf5_lookup_rows") == "12");
  CHECK(Value(r, "dataset.hdf5_lookup_row_bytes") == "4096");
  CHECK(Value(r, "dataset.num_samples_per_file") == "12");
  CHECK(Value(r, "dataset.record_length_bytes") == "32768");
  CHECK(Value(r, "train.epochs") == "2");
  CHECK(Value(r, "reader.read_threads") == "2");
  CHECK(Value(r, "reader.sample_shuffle") == "seed");
  // fastMRI reads the reconstruction's row once the k-space slice is read.
  CHECK(Value(r, "reader.hdf5_lookup_order") == "after");
  INFO(r.Find("reader.hdf5_lookup_order")->reason);
  CHECK(r.Find("reader.hdf5_lookup_order")->reason.find("in 192 of 192 opens") !=
        std::string::npos);
}

TEST_CASE("fit, hdf5 tables: the main process opening every volume first is a counting __init__") {
  const FitResult r = Fit(SliceDatasetLoop(true, false, kVolumes), Volumes(true, true));
  CHECK(Value(r, "reader.open_files_at_start") == "true");
  INFO(r.Find("reader.open_files_at_start")->reason);
  CHECK(r.Find("reader.open_files_at_start")->reason.find("opened 8 of the 8 data files") !=
        std::string::npos);
  // The main process's opens are no reader's: the workers' keys are those of the loop alone.
  const FitResult alone = Fit(SliceDatasetLoop(), Volumes(true, true));
  CHECK(r.Find("reader.open_files_at_start")->inferred);
  for (const char* key : {"reader.read_threads", "reader.h5py_reopen", "reader.hdf5_lookup_order",
                          "reader.batch_size", "reader.h5py_read_attributes", "train.epochs",
                          "dataset.num_files_train"}) {
    INFO(key);
    CHECK(Value(r, key) == Value(alone, key));
  }
  const FitEntry* none = alone.Find("reader.open_files_at_start");
  CHECK((none == nullptr || !none->inferred));
  // Half the volumes: a main process that looked at some files, not a count of them all.
  const FitEntry* half = Fit(SliceDatasetLoop(true, false, kVolumes / 2), Volumes(true, true))
                             .Find("reader.open_files_at_start");
  CHECK((half == nullptr || !half->inferred));
}

TEST_CASE("fit, hdf5 tables: a row read before its slice is read before the sample") {
  const FitResult r = Fit(SliceDatasetLoop(true, true), Volumes(true));
  CHECK(Value(r, "reader.hdf5_lookup_dataset") == "/lookup");
  CHECK(Value(r, "reader.hdf5_lookup_order") == "before");
  INFO(r.Find("reader.hdf5_lookup_order")->reason);
  CHECK(r.Find("reader.hdf5_lookup_order")->reason.find("in 192 of 192 opens") !=
        std::string::npos);
}

TEST_CASE("fit, hdf5 tables: without the probe's layout the second dataset is no table") {
  // The same trace, the files not described so: the table's reads (4-48 KiB) and the heap's are
  // taken for samples, as before the probe told them apart; no lookup table is fitted.
  const FitResult r = Fit(SliceDatasetLoop(), Volumes(false));
  const FitEntry* lookup = r.Find("reader.hdf5_lookup_dataset");
  CHECK((lookup == nullptr || !lookup->inferred));
}

TEST_CASE("fit, hdf5 tables: a program that reads only the table keeps its reads as samples") {
  // Reads of the table alone (a loop over the reconstructions): none in the samples' extent, so
  // the probe's layout is not the program's and its reads stay sample reads.
  ProfileTrace t;
  int64_t now = 1'000'000;
  for (int pass = 0; pass < 2; ++pass) {
    for (int k = 0; k < kVolumes * kSlices; ++k) {
      const int v = k / kSlices, s = (k * 5) % kSlices;
      const std::string path = VolumePath(v);
      AddEvent(&t, 100, 100, "open64", now, 2, path);
      AddEvent(&t, 100, 100, "pread", now + 5, 1, path, 0, 8, 8);
      AddEvent(&t, 100, 100, "pread", now + 8, 5, path, kReconAt + s * kReconRow, kReconRow,
               kReconRow);
      AddEvent(&t, 100, 100, "close", now + 15, 1, path);
      now += k % 4 == 3 ? 6'000 : 40;
    }
  }
  const FitResult r = Fit(t, Volumes(true));
  const FitEntry* lookup = r.Find("reader.hdf5_lookup_dataset");
  CHECK((lookup == nullptr || !lookup->inferred));
  INFO(r.Find("train.epochs")->reason);
  CHECK(Value(r, "train.epochs") == "2");
}

TEST_CASE("fit, hdf5 tables: a probe that took another dataset for the samples is set aside") {
  // h5py_crops' files: the probe takes a small coordinates dataset for the samples (the first by
  // name) while the program reads 32 KiB chunks of a volume elsewhere in the file, and the
  // coordinates a few bytes each: the chunk reads stay the sample reads.
  ProfileTrace t;
  int64_t now = 1'000'000;
  const std::string path = VolumePath(0);
  AddEvent(&t, 100, 100, "open64", now, 2, path);
  for (int pass = 0; pass < 2; ++pass) {
    for (int k = 0; k < 64; ++k) {
      const int c = (k * 7 + pass * 3) % 64;
      AddEvent(&t, 100, 100, "pread", now + 5, 1, path, 600'000 + c * 12, 12, 12);
      AddEvent(&t, 100, 100, "pread", now + 10, 20, path, 4'096 + c * 32'768, 32'768, 32'768);
      now += 3'000;
    }
  }
  DataFileInfo info;
  info.format = "hdf5";
  info.size = 700'000;
  info.samples = 64;
  info.sample_sizes.assign(64, 12);
  info.data_bytes = 64 * 12;
  info.sample_extent = {600'000, 64 * 12};
  info.row_tables.push_back({{650'000, 64 * 8}, 8});
  const FitResult r = Fit(t, fit_test::ProbingAs(std::move(info)));
  CHECK(Value(r, "dataset.record_length_bytes") == "32768");
  CHECK(Value(r, "train.epochs") == "2");
  const FitEntry* lookup = r.Find("reader.hdf5_lookup_dataset");
  CHECK((lookup == nullptr || !lookup->inferred || lookup->value != "/lookup"));
}

TEST_CASE("fit, hdf5 tables: rows read through libhdf5's 64 KiB sieve are the probed samples") {
  // h5py's f['x'][j] per sample in files kept open: 16 KiB rows, each read as the sieve buffer a
  // fresh dataset object fills from the row (64 KiB, less at the dataset's end), 4 files of 64
  // rows, 2 passes by one reader, a pause after every 16.
  constexpr int64_t kRow = 16'384, kAt = 2'048, kRows = 64;
  ProfileTrace t;
  int64_t now = 1'000'000;
  for (int f = 0; f < 4; ++f) AddEvent(&t, 100, 100, "open64", now + f, 1, VolumePath(f));
  for (int pass = 0; pass < 2; ++pass) {
    for (int k = 0; k < 4 * kRows; ++k) {
      const int i = (k * 37 + pass * 5) % (4 * kRows);
      const int64_t row = kAt + (i % kRows) * kRow;
      const int64_t sieve = std::min<int64_t>(65'536, kAt + kRows * kRow - row);
      AddEvent(&t, 100, 100, "pread", now, 1, VolumePath(i / kRows), 800, 512, 512);
      AddEvent(&t, 100, 100, "pread", now + 5, 20, VolumePath(i / kRows), row, sieve, sieve);
      now += 200 + (k % 16 == 15 ? 5'000 : 0);
    }
  }
  DataFileInfo info;
  info.format = "hdf5";
  info.size = kAt + kRows * kRow + 4'096;
  info.samples = kRows;
  info.sample_sizes.assign(kRows, kRow);
  info.data_bytes = kRows * kRow;
  info.sample_extent = {kAt, kRows * kRow};
  const FitResult r = Fit(t, fit_test::ProbingAs(info));
  INFO(FitYaml(r, {"test"}));
  CHECK(Value(r, "dataset.record_length_bytes") == "16384");
  CHECK(Value(r, "dataset.num_samples_per_file") == "64");
  CHECK(r.Find("dataset.num_samples_per_file")->reason.find("stored in the files") !=
        std::string::npos);
  // The same reads where the probe places the samples elsewhere: pieces of another dataset.
  info.sample_extent = {kAt + kRows * kRow, 4'096};
  const FitResult elsewhere = Fit(t, fit_test::ProbingAs(info));
  CHECK(Value(elsewhere, "dataset.record_length_bytes") == "65536");
}

TEST_CASE("fit, hdf5 tables: the root's attributes, read after each open") {
  const FitResult r = Fit(SliceDatasetLoop(), Volumes(true, true));
  CHECK(Value(r, "dataset.hdf5_root_attributes") == kAttributes);
  CHECK(r.Find("dataset.hdf5_root_attributes")->confidence == FitConfidence::kHigh);
  CHECK(Value(r, "reader.h5py_read_attributes") == "true");
  INFO(r.Find("reader.h5py_read_attributes")->reason);
  // The first 16 opens of each of the 8 files, every one reading the heap.
  CHECK(r.Find("reader.h5py_read_attributes")->reason.find("128 of the 128 traced loads") !=
        std::string::npos);
  // The heap read is no sample read: one per open, as without it.
  CHECK(Value(r, "reader.hdf5_lookup_dataset") == "/lookup");
  CHECK(Value(r, "dataset.record_length_bytes") == "32768");
}

TEST_CASE("fit, hdf5 tables: root attributes never read keep the reader's default") {
  // The files have them (the root's header grown by them is read at every open), the program
  // reads none: no heap read.
  const FitResult r = Fit(SliceDatasetLoop(false), Volumes(true, true));
  CHECK(Value(r, "dataset.hdf5_root_attributes") == kAttributes);
  const FitEntry* read = r.Find("reader.h5py_read_attributes");
  CHECK((read == nullptr || !read->inferred));
  // Files without root attributes: neither key.
  const FitResult plain = Fit(SliceDatasetLoop(), Volumes(true, false));
  const FitEntry* items = plain.Find("dataset.hdf5_root_attributes");
  CHECK((items == nullptr || !items->inferred));
}

}  // namespace
}  // namespace dlio
