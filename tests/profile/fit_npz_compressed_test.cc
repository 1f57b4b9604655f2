// FitTrace on hand-built traces of np.load over small np.savez_compressed files read by DataLoader
// workers: each load is a burst of 4 KiB buffer fills that jumps to the end records and back and
// reads the member twice (numpy opens it twice), sometimes with a stall inside; and a loader that
// reads 4 KiB records of an open file, which is no such load.
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

constexpr int64_t kFileBytes = 14'200;  // a 64 KiB array deflated to about a fifth
constexpr int kFiles = 64;

std::string Path(int f) { return "/d/fields/f_" + std::to_string(10'000 + f) + ".npz"; }

// One np.load(path)['x'] as numpy 1.24 issues it, `stall` us inside (a busy host, an inflate);
// with `tells`, that many lseeks after the array (another member's header and array read from
// Python's buffer: only zipfile's tells reach the file).
int64_t Load(ProfileTrace* t, int32_t pid, int f, int64_t now, int64_t stall, int tells = 0) {
  const std::string p = Path(f);
  AddEvent(t, pid, pid, "open64", now, 2, p);
  AddEvent(t, pid, pid, "read", now + 5, 3, p, 0, 4096, 4096);  // the magic, then the end records
  AddEvent(t, pid, pid, "read", now + 10, 1, p, kFileBytes - 22, 22, 22);
  AddEvent(t, pid, pid, "read", now + 12, 1, p, kFileBytes, 8192, 0);
  AddEvent(t, pid, pid, "read", now + 14, 1, p, kFileBytes - 64, 42, 42);
  AddEvent(t, pid, pid, "read", now + 16, 1, p, kFileBytes - 188, 124, 124);
  now += 20 + stall;
  for (int open = 0; open < 2; ++open) {  // the member opened for its magic, then for the array
    const int64_t end = open == 0 ? 8192 : kFileBytes - 188;
    for (int64_t at = 0; at < end; at += 4096) {
      const int64_t n = std::min<int64_t>(4096, end - at);
      AddEvent(t, pid, pid, "read", now, 3, p, at, 4096, n);
      now += 30;
    }
  }
  for (int k = 0; k < tells; ++k) AddEvent(t, pid, pid, "lseek64", now++, 1, p, 0, -1, 0);
  AddEvent(t, pid, pid, "close", now, 1, p);
  return now + 10;
}

// Two passes, two workers forked per pass, batch 8, a 3 ms step; every fifth load stalls 4 ms.
ProfileTrace Loads(int tells = 0) {
  ProfileTrace t;
  int64_t now = 1'000'000;
  for (int pass = 0; pass < 2; ++pass) {
    for (int k = 0; k < kFiles; ++k) {
      const int32_t pid = 100 + 10 * pass + (k / 8) % 2;
      now = Load(&t, pid, (k * 37 + pass * 11) % kFiles, now, k % 5 == 0 ? 4'000 : 0, tells);
      if (k % 8 == 7) now += 3'000;
    }
    now += 40'000;
  }
  return t;
}

FitOptions DeflatedMembers() {
  DataFileInfo info;
  info.format = "npz";
  info.size = kFileBytes;
  info.samples = 128;  // x is (128, 128) float32: rows of 512 bytes to dlio's reader
  info.sample_sizes.assign(128, 512);
  info.data_bytes = 65'536;
  info.stored_fraction = 13'900.0 / 65'536;
  info.compression = "gzip";
  info.compressed_units = 1;
  info.compressed_unit_bytes = 65'664;  // the member: the npy header and the array
  info.stored_unit_mean = 13'900;
  info.writes_compression_ratio = true;
  return fit_test::ProbingAs(std::move(info));
}

TEST_CASE("fit: np.load of a compressed npz that jumps, re-reads and stalls is one load") {
  const FitResult r = Fit(Loads(), DeflatedMembers());
  CHECK(r.request_model == "numpy");
  CHECK(Value(r, "dataset.num_samples_per_file") == "1");
  CHECK(Value(r, "train.epochs") == "2");
  CHECK(Value(r, "reader.batch_size") == "8");
  CHECK(Value(r, "reader.persistent_workers") == "false");
  // The array's own bytes, deflated as much as the program's members were.
  CHECK(Value(r, "dataset.record_length_bytes") == "65536");
  CHECK(Value(r, "dataset.compression") == "gzip");
  CHECK(Value(r, "dataset.compression_ratio") == "4.7240");  // 65664 / 13900
  CHECK(Value(r, "dataset.compression_ratio_stdev") == "0.0000");
}

// The calls of one Load with `tells`, in order (a read as its offset, an lseek as kLoadSeek),
// its reads from the member on shifted by `shift` (another member list reads elsewhere).
std::vector<int64_t> LoadCalls(int tells, int64_t shift = 0) {
  ProfileTrace one;
  Load(&one, 1, 0, 0, 0, tells);
  std::vector<int64_t> calls;
  for (size_t i = 0; i < one.kind.size(); ++i) {
    if (one.kind[i] == OpKind::kRead) calls.push_back(one.offset[i] + (i > 6 ? shift : 0));
    if (one.kind[i] == OpKind::kSeek) calls.push_back(DataFileInfo::kLoadSeek);
  }
  return calls;
}

// The probe's loads of a file under each reader.npz_members value it tried.
FitOptions WithVariants(std::vector<std::pair<std::string, std::vector<int64_t>>> variants) {
  DataFileInfo info = DeflatedMembers().probe("").value();
  for (auto& [value, offsets] : variants) {
    info.read_variants.push_back({"reader.npz_members", value, std::move(offsets)});
  }
  return fit_test::ProbingAs(std::move(info));
}

TEST_CASE("fit: the npz members a load reads are the probe's load whose calls the trace's match") {
  // The traced loads make the calls of the probe's load of x and y: both members, in that order.
  FitResult r = Fit(Loads(), WithVariants({{"", LoadCalls(0, 4096)},
                                           {"x.npy,y.npy", LoadCalls(0)},
                                           {"y.npy,x.npy", LoadCalls(0, -64)}}));
  CHECK(Value(r, "reader.npz_members") == "x.npy,y.npy");
  const FitEntry* e = r.Find("reader.npz_members");
  REQUIRE(e != nullptr);
  CHECK(e->reason.rfind("128 of the 128 traced loads of 64 probed files make", 0) == 0);
  // y read from Python's buffer: the same reads as x alone, told apart by zipfile's 8 tells.
  r = Fit(Loads(8), WithVariants({{"", LoadCalls(0)}, {"x.npy,y.npy", LoadCalls(8)}}));
  CHECK(Value(r, "reader.npz_members") == "x.npy,y.npy");
  // They match the default's (the sample's member only): nothing to set.
  r = Fit(Loads(), WithVariants({{"", LoadCalls(0)}, {"x.npy,y.npy", LoadCalls(8)}}));
  CHECK(Value(r, "reader.npz_members") == "(missing)");
  // They match none: the default stays.
  r = Fit(Loads(), WithVariants({{"", LoadCalls(0, 8192)}, {"x.npy,y.npy", LoadCalls(0, 4096)}}));
  CHECK(Value(r, "reader.npz_members") == "(missing)");
  CHECK(Value(r, "dataset.num_samples_per_file") == "1");  // the rest of the fit unchanged
}

TEST_CASE("fit: 4 KiB records of a file kept open, none read twice, stay one sample each") {
  ProfileTrace t;
  int64_t now = 1'000'000;
  const std::string p = "/d/records.bin";
  constexpr int kRecords = 64;
  for (int pass = 0; pass < 2; ++pass) {
    AddEvent(&t, 1, 1, "open64", now, 2, p);
    for (int k = 0; k < kRecords; ++k) {
      const int64_t at = (k * 29 + pass * 7) % kRecords * 4096;
      AddEvent(&t, 1, 1, "pread", now + 10, 5, p, at, 4096, 4096);
      now += k % 4 == 3 ? 3'000 : 50;
    }
    AddEvent(&t, 1, 1, "close", now, 1, p);
    now += 10'000;
  }
  const FitResult r = Fit(t);
  CHECK(Value(r, "dataset.num_samples_per_file") == "64");
  CHECK(Value(r, "train.epochs") == "2");
  CHECK(Value(r, "reader.batch_size") == "4");
}

}  // namespace
}  // namespace dlio
