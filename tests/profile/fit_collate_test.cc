// reader.batch_size from the batches PyTorch DataLoader workers collate into shared memory: the
// LD_PRELOAD tracer counts each thread's shm_open creations on its next call ("shm"), and fit
// counts a worker's sample reads between those marks, whatever the gaps between the reads.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "dlio/profile_fit.h"
#include "profile/analysis_test_util.h"
#include "profile/fit_load_util.h"
#include "profile/fit_test_util.h"

namespace dlio {
namespace {

using fit_test::Fit;
using fit_test::Host;
using fit_test::Value;
using testing::AddEvent;

// Workers that decode every sample: `batches[w]` lists the samples of worker w's batches in one
// pass; every gap between two reads is a decode of 2-5 ms (through `host`) and a batch's end no
// longer, so no pause tells the batches apart. After each batch the worker collates it into
// `tensors` shared-memory objects: the first call it makes next carries them. `passes` passes; a
// new process per worker and pass unless `persistent`. `per_sample` shared-memory objects are
// made after each sample's read too (a dataset that shares each sample itself).
struct Loader {
  std::vector<std::vector<int>> batches = {{4, 4, 4, 4}, {4, 4, 4, 4}};
  int passes = 2;
  bool persistent = false;
  int tensors = 1;
  int per_sample = 0;
  // Every `lone_row`-th sample (0: none) is followed by a small read of its file on its own (a
  // table's row read apart from the sample's access: y = f['y'][j]).
  int lone_row = 0;
};

ProfileTrace Build(const Loader& l, Host* host) {
  ProfileTrace t;
  int32_t created_pending[2] = {0, 0};
  for (int pass = 0; pass < l.passes; ++pass) {
    int file = 0;
    for (size_t w = 0; w < l.batches.size(); ++w) {
      const int32_t pid = static_cast<int32_t>(l.persistent ? 10 + w : 10 + 2 * pass + w);
      if (!l.persistent) created_pending[w] = 0;  // a new process: nothing carried over
      int64_t now = 1'000'000 + pass * 20'000'000 + static_cast<int64_t>(w) * 700;
      for (int n : l.batches[w]) {
        for (int k = 0; k < n; ++k, ++file) {
          const std::string path = "/data/train/img_" + std::to_string(file) + ".npz";
          AddEvent(&t, pid, pid, "openat", now, 3, path);
          t.shm_created.back() = created_pending[w];
          created_pending[w] = 0;
          AddEvent(&t, pid, pid, "read", now + 5, 60, path, 0, 90'000, 90'000);
          AddEvent(&t, pid, pid, "close", now + 70, 2, path);
          if (l.lone_row > 0 && file % l.lone_row == 0) {
            now += 75 + host->Gap(3'000);
            AddEvent(&t, pid, pid, "openat", now, 3, path);
            AddEvent(&t, pid, pid, "read", now + 5, 2, path, 90'000, 264, 264);
            AddEvent(&t, pid, pid, "close", now + 10, 2, path);
          }
          created_pending[w] += l.per_sample;
          now += 75 + host->Gap(3'000);  // the decode
        }
        created_pending[w] += l.tensors;  // the collate, at the batch's end
        now += host->Gap(1'000);
      }
    }
  }
  return t;
}

constexpr uint32_t kSeeds[] = {1, 2, 3, 4, 5, 6, 7, 8};

TEST_CASE("fit: DataLoader workers that decode every sample: the batch from their collates") {
  // Gaps stretched up to 3x and 15% of them stalled 20 ms (a busy host): the collates stay put.
  for (uint32_t seed : kSeeds) {
    Host host(seed, 3, 0.15, 20'000);
    const FitResult r = Fit(Build(Loader{}, &host));
    INFO("seed " << seed << "\n" << FitYaml(r, {"test"}));
    CHECK(Value(r, "reader.batch_size") == "4");
    const FitEntry* batch = r.Find("reader.batch_size");
    REQUIRE(batch != nullptr);
    CHECK(batch->confidence == FitConfidence::kHigh);
    // 2 passes x 2 workers x 4 batches, each worker's last unmarked: 12 counted.
    CHECK(batch->reason.find("after every 4 sample reads (12 of 12 batches") != std::string::npos);
  }
}

TEST_CASE("fit: collated batches: a pass's short last batch does not set the batch") {
  // Persistent workers over 3 passes of 42 samples in batches of 4: worker 1's last batch of a
  // pass holds 2, and the next pass's first call marks its end (31 batches counted: 29 of 4).
  Loader l;
  l.batches = {{4, 4, 4, 4, 4, 4}, {4, 4, 4, 4, 2}};
  l.passes = 3;
  l.persistent = true;
  l.tensors = 2;  // images and labels
  Host host(4, 2);
  const FitResult r = Fit(Build(l, &host));
  INFO(FitYaml(r, {"test"}));
  CHECK(Value(r, "reader.batch_size") == "4");
  CHECK(r.Find("reader.batch_size")
            ->reason.find("29 of 31 batches, the smaller ones ending a "
                          "pass") != std::string::npos);
}

TEST_CASE("fit: collated batches: a table's row read on its own is no sample of the batch") {
  // Every 5th sample's file read again for a 264-byte row: batches of 4 samples, some of 5
  // accesses, which would otherwise disagree.
  Loader l;
  l.lone_row = 5;
  Host host(7, 1.5);
  const FitResult r = Fit(Build(l, &host));
  INFO(FitYaml(r, {"test"}));
  CHECK(Value(r, "reader.batch_size") == "4");
  CHECK(r.Find("reader.batch_size")->reason.find("after every 4 sample reads (12 of 12 batches") !=
        std::string::npos);
}

TEST_CASE("fit: collated batches of 1 sample each are batch 1") {
  Loader l;
  l.batches = {std::vector<int>(8, 1), std::vector<int>(8, 1)};
  Host host(5, 1.5);
  const FitResult r = Fit(Build(l, &host));
  INFO(FitYaml(r, {"test"}));
  CHECK(Value(r, "reader.batch_size") == "1");
  CHECK(r.Find("reader.batch_size")->reason.find("collated") != std::string::npos);
}

TEST_CASE("fit: marks that are no collates alone are not read as batches") {
  Host host(6, 1.5);
  SECTION("a dataset that shares each sample's memory: the marks' counts differ") {
    Loader l;
    l.per_sample = 1;
    const FitResult r = Fit(Build(l, &host));
    INFO(FitYaml(r, {"test"}));
    const FitEntry* batch = r.Find("reader.batch_size");
    CHECK((batch == nullptr || batch->reason.find("collated") == std::string::npos));
  }
  SECTION("too few marked batches: 2 in all") {
    Loader l;
    l.batches = {{16, 16}, {16, 16}};
    l.passes = 1;
    const FitResult r = Fit(Build(l, &host));
    INFO(FitYaml(r, {"test"}));
    const FitEntry* batch = r.Find("reader.batch_size");
    CHECK((batch == nullptr || batch->reason.find("collated") == std::string::npos));
  }
  SECTION("batches within one sample's reads: an IterableDataset streaming a shard's records") {
    // Each worker reads 3 files of 12 records, a collate after every 3 records: 4 marks a file,
    // which fit's one sample per file cannot count.
    ProfileTrace t;
    for (int pass = 0; pass < 2; ++pass) {
      for (int32_t w = 0; w < 2; ++w) {
        const int32_t pid = 20 + 2 * pass + w;
        int64_t now = 1'000'000 + pass * 20'000'000 + w * 500;
        int32_t pending = 0;
        for (int f = w; f < 6; f += 2) {
          const std::string path = "/data/shards/shard_" + std::to_string(f) + ".bin";
          AddEvent(&t, pid, pid, "openat", now, 3, path);
          t.shm_created.back() = pending;
          pending = 0;
          for (int r = 0; r <= 12; ++r) {  // the 13th read finds the end
            now += host.Gap(400);
            AddEvent(&t, pid, pid, "read", now, 20, path, r * 8192, 8192, r < 12 ? 8192 : 0);
            t.shm_created.back() = pending;
            pending = 0;
            if (r % 3 == 2) pending = 1;
          }
          AddEvent(&t, pid, pid, "close", now + 30, 2, path);
          t.shm_created.back() = pending;
          pending = 0;
          now += 100;
        }
      }
    }
    const FitResult r = Fit(t);
    INFO(FitYaml(r, {"test"}));
    const FitEntry* batch = r.Find("reader.batch_size");
    CHECK((batch == nullptr || batch->reason.find("collated") == std::string::npos));
  }
  SECTION("batches larger than the most common count: a mark went missing") {
    Loader l;
    l.batches = {{4, 4, 8, 4}, {4, 4, 4, 4}};
    const FitResult r = Fit(Build(l, &host));
    INFO(FitYaml(r, {"test"}));
    const FitEntry* batch = r.Find("reader.batch_size");
    CHECK((batch == nullptr || batch->reason.find("collated") == std::string::npos));
  }
}

}  // namespace
}  // namespace dlio
