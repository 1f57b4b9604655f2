// FitTrace's pyio rule when a program's layered readers find a file's end more often than its
// calls would: gzip.open over Python's buffered file reads a shard in 4 KiB requests, then probes
// the end 5 or 6 times (requests that return nothing), where a loop of f.read(n) finds it once
// or twice. The requests before the end decide the calls; the probes are set aside, and only
// when no calls make the requests exactly.
#include <catch2/catch.hpp>
#include <cstdint>
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

constexpr int kShards = 8;

int64_t ShardSize(int s) { return 480'000 + 7'919 * s; }
std::string ShardPath(int s) { return "/d/c4/c4-train." + std::to_string(s) + ".json.gz"; }

// One shard read through gzip.open: open, fstat, FileIO's lseek, 4 KiB requests front to back
// (the last one short), then `probes` 4 KiB requests at the end that return nothing, close.
void ReadShard(ProfileTrace* t, int32_t pid, int64_t at, int s, int probes) {
  const std::string path = ShardPath(s);
  const int64_t size = ShardSize(s);
  AddEvent(t, pid, pid, "open64", at, 3, path, -1, -1, 5);
  AddEvent(t, pid, pid, "fstat64", at + 4, 1, path);
  AddEvent(t, pid, pid, "lseek64", at + 6, 1, path, 0, -1, 0);
  at += 10;
  for (int64_t o = 0; o < size; o += 4096, at += 20) {
    AddEvent(t, pid, pid, "read", at, 8, path, o, 4096, std::min<int64_t>(4096, size - o));
  }
  for (int p = 0; p < probes; ++p, at += 5)
    AddEvent(t, pid, pid, "read", at, 1, path, size, 4096, 0);
  AddEvent(t, pid, pid, "close", at + 5, 1, path);
}

// Two epochs of 2 workers each (an IterableDataset's worker w streams shards w, w + 2, ...).
ProfileTrace Shards(int probes_even, int probes_odd) {
  ProfileTrace t;
  int64_t at = 1'000'000;
  for (int e = 0; e < 2; ++e) {
    for (int s = 0; s < kShards; ++s) {
      ReadShard(&t, 100 * (e + 1) + s % 2, at, s, s % 2 == 0 ? probes_even : probes_odd);
      at += 20'000;
    }
    at += 100'000;
  }
  return t;
}

TEST_CASE("fit: gzip shards read in 4 KiB requests with extra probes of the end are pyio") {
  const FitResult r = Fit(Shards(6, 5), WithPyioRequests());
  INFO(r.Find("reader.io_model")->reason);
  CHECK(Value(r, "reader.io_model") == "pyio");
  // The first calls whose requests before the end are the program's: a head under one buffer,
  // then read(8192): 4 KiB straight, then a 4 KiB fill, each call.
  CHECK(Value(r, "reader.pyio_head_bytes") == "128");
  CHECK(Value(r, "reader.pyio_read_size") == "8192");
  CHECK(Value(r, "reader.pyio_call") == "read");
  CHECK(r.Find("reader.io_model")->reason.find("up to the file's end") != std::string::npos);
  // The calls find the end twice (a straight 4 KiB read, then read(8192)'s); the program probes
  // it 6 times in half the shards and 5 in the others: 4 more, rounded.
  CHECK(Value(r, "reader.pyio_end_reads") == "4");
  // What the emulation then reads of a shard: the program's requests before the end.
  const auto emulated = PyioReadRequests(static_cast<uint64_t>(ShardSize(3)), 4096, 128, 8192,
                                         PyioCall::kRead, 0, 0, 0, 0);
  REQUIRE(emulated.ok());
  size_t before_end = 0;
  for (const auto& [offset, size] : emulated.value()) {
    if (offset >= static_cast<uint64_t>(ShardSize(3))) continue;
    CHECK(offset == before_end * 4096);
    CHECK(size == 4096);
    ++before_end;
  }
  CHECK(before_end == static_cast<size_t>((ShardSize(3) + 4095) / 4096));
}

TEST_CASE("fit: requests that calls make exactly are matched with their reads of the end") {
  // One probe of the end after the short read: read(4096) with no head makes exactly these
  // requests (a raw read a call, then one that finds the end), so the exact rule decides.
  const FitResult r = Fit(Shards(1, 1), WithPyioRequests());
  INFO(r.Find("reader.io_model")->reason);
  CHECK(Value(r, "reader.io_model") == "pyio");
  CHECK(r.Find("reader.io_model")->reason.find("up to the file's end") == std::string::npos);
  CHECK(r.Find("reader.pyio_end_reads") == nullptr);
}

// scipy.io.loadmat of a file of one large variable and a small one, as traced: a 4 KiB fill for
// the header and the first tags, the large variable's data in read(131072) and read(65536) (each
// straight reads, then a fill), the small variable from the last fill, then one fill at the end
// (read(8) of another variable's tag) that returns nothing.
void LoadMat(ProfileTrace* t, int32_t pid, int64_t at, const std::string& path) {
  AddEvent(t, pid, pid, "open64", at, 3, path, -1, -1, 5);
  AddEvent(t, pid, pid, "fstat64", at + 4, 1, path);
  AddEvent(t, pid, pid, "read", at + 10, 8, path, 0, 4096, 4096);
  AddEvent(t, pid, pid, "read", at + 20, 30, path, 4096, 126'976, 126'976);
  AddEvent(t, pid, pid, "read", at + 60, 8, path, 131'072, 4096, 4096);
  AddEvent(t, pid, pid, "read", at + 70, 20, path, 135'168, 61'440, 61'440);
  AddEvent(t, pid, pid, "read", at + 95, 8, path, 196'608, 4096, 312);
  AddEvent(t, pid, pid, "read", at + 110, 2, path, 196'920, 4096, 0);
  AddEvent(t, pid, pid, "close", at + 120, 1, path);
}

TEST_CASE("fit: scipy.io.loadmat's reads are a body in 128 KiB calls, a tail and a look past it") {
  ProfileTrace t;
  int64_t at = 1'000'000;
  for (int e = 0; e < 2; ++e) {
    for (int f = 0; f < 24; ++f) {
      LoadMat(&t, 100 * (e + 1) + f % 2, at,
              "/d/mats/part_" + std::to_string((f * 7) % 24) + ".mat");
      at += 2'000;
    }
    at += 100'000;
  }
  const FitResult r = Fit(t, WithPyioRequests());
  INFO(r.Find("reader.io_model")->reason);
  CHECK(Value(r, "reader.io_model") == "pyio");
  CHECK(Value(r, "reader.pyio_head_bytes") == "128");
  CHECK(Value(r, "reader.pyio_read_size") == "131072");
  CHECK(Value(r, "reader.pyio_call") == "read");
  CHECK(Value(r, "reader.pyio_tail_bytes") == "312");
  CHECK(Value(r, "reader.pyio_end_reads") == "1");
  // Those calls and the look past the end make the traced requests, every one.
  const auto emulated =
      PyioReadRequests(196'920, 4096, 128, 131'072, PyioCall::kRead, 312, 0, 0, 0, 1);
  REQUIRE(emulated.ok());
  const std::vector<ReadRequest> traced = {{0, 4096},         {4096, 126'976}, {131'072, 4096},
                                           {135'168, 61'440}, {196'608, 4096}, {196'920, 4096}};
  CHECK(emulated.value() == traced);
}

}  // namespace
}  // namespace dlio
