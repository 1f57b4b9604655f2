// reader.client_costs from hand-built traces: np.load loops whose readers spend their time on
// their own work between loads (client-bound: framework) or on the loads (I/O-bound: none), or
// wait for the consumer; also as a loaded host stretches every time and stalls some.
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cstdint>
#include <map>
#include <random>
#include <string>

#include "dlio/profile_fit.h"
#include "profile/analysis_test_util.h"
#include "profile/fit_test_util.h"

namespace dlio {
namespace {

using fit_test::Fit;
using fit_test::Value;
using testing::AddEvent;

constexpr int kCostFiles = 16;
constexpr int kBatch = 4;

struct CostLoop {
  int workers = 2;             // DataLoader worker processes; 0: one process reads and computes
  int64_t read_us = 400;       // one np.load: open, 16 reads of 4 KiB over this time, close
  int64_t client_us = 20'000;  // a reader's own work after each load (decode, transform)
  int64_t wait_us = 0;         // a worker's pause after each batch (waiting for the consumer)
  int64_t compute_us = 1'000;  // one process: the compute event after each batch
  double stretch = 1;          // a loaded host: every time x U(1, stretch) ...
  double stall_share = 0;      // ... and this share of them stalled by 60 ms
  uint32_t seed = 1;
  // Each load's reads: 16 of this size; the tracer's page-fault count of each (-1: none, as
  // for reads under 64 KiB), and whether only the first read of a load faults (np.load: a fresh
  // array per load, glibc's heap reused for the rest) or only the first of each worker (a buffer
  // allocated once).
  int64_t read_bytes = 4096;
  int64_t faults = -1;
  enum class Faulting { kEveryRead, kFirstOfLoad, kFirstOfWorker } faulting = Faulting::kEveryRead;
};

class CostBuilder {
 public:
  explicit CostBuilder(const CostLoop& l) : l_(l), rng_(l.seed) {}

  ProfileTrace Build() {
    const int readers = std::max(l_.workers, 1);
    std::array<int64_t, 8> now{};
    now.fill(1'000'000);
    for (int pass = 0; pass < 2; ++pass) {
      for (int batch = 0; batch < kCostFiles / kBatch; ++batch) {
        const int w = batch % readers;
        for (int k = 0; k < kBatch; ++k) {
          now[w] = Load(100 + w, (batch * kBatch + k) * 5 % kCostFiles, now[w]);
          if (k + 1 < kBatch) now[w] += Time(l_.client_us);
        }
        now[w] += Time(l_.client_us + l_.wait_us);
        if (l_.workers == 0) {
          AddEvent(&t_, 100, 100, "ai.compute.step", now[w], l_.compute_us);
          now[w] += Time(l_.compute_us);
        }
      }
    }
    return std::move(t_);
  }

 private:
  int64_t Time(int64_t us) {
    const double f = std::uniform_real_distribution<double>(1, l_.stretch)(rng_);
    const bool stall = std::uniform_real_distribution<double>(0, 1)(rng_) < l_.stall_share;
    return static_cast<int64_t>(static_cast<double>(us) * f) + (stall ? 60'000 : 0);
  }

  int64_t Faults(int32_t pid, int64_t k) {
    const bool first_of_worker = loads_[pid]++ == 0;
    switch (l_.faulting) {
      case CostLoop::Faulting::kEveryRead:
        return l_.faults;
      case CostLoop::Faulting::kFirstOfLoad:
        return k == 0 ? l_.faults : 0;
      case CostLoop::Faulting::kFirstOfWorker:
        return first_of_worker ? l_.faults : 0;
    }
    return -1;
  }

  int64_t Load(int32_t pid, int f, int64_t now) {
    const std::string path = "/d/train/img_" + std::to_string(f) + "_of_16.npz";
    const int64_t read_us = Time(l_.read_us), n = l_.read_bytes;
    AddEvent(&t_, pid, pid, "open64", now, 2, path);
    for (int64_t k = 0; k < 16; ++k) {
      AddEvent(&t_, pid, pid, "pread", now + 5 + k * read_us / 16, 2, path, k * n, n, n,
               l_.faults < 0 ? -1 : Faults(pid, k));
    }
    AddEvent(&t_, pid, pid, "close", now + read_us + 8, 1, path);
    return now + read_us + 10;
  }

  CostLoop l_;
  std::mt19937 rng_;
  ProfileTrace t_;
  std::map<int32_t, int64_t> loads_;  // reads so far per process
};

FitResult FitLoop(const CostLoop& l) { return Fit(CostBuilder(l).Build()); }

std::string Reason(const FitResult& r, const std::string& key = "reader.client_costs") {
  const FitEntry* e = r.Find(key);
  return e == nullptr ? "(missing)" : e->reason;
}

TEST_CASE("fit client_costs: DataLoader workers busy between loads are client-bound") {
  // 20 ms of a worker's own work after every 0.4 ms load, the consumer never paces them.
  const FitResult r = FitLoop({});
  CHECK(Value(r, "reader.io_model") == "pytorch");
  CHECK(Value(r, "reader.client_costs") == "framework");
  const std::string why = Reason(r);
  INFO(why);
  CHECK(why.find("client-bound: the 2 reading processes spend a median 20.0") != std::string::npos);
  CHECK(why.find("no period stands") != std::string::npos);
  CHECK(why.find("no sample read in flight 9") != std::string::npos);
}

TEST_CASE("fit client_costs: DataLoader workers that spend their time reading are I/O-bound") {
  CostLoop l;
  l.read_us = 5'000;
  l.client_us = 1'000;
  const FitResult r = FitLoop(l);
  CHECK(Value(r, "reader.io_model") == "pytorch");
  const FitEntry* e = r.Find("reader.client_costs");
  REQUIRE(e != nullptr);
  CHECK_FALSE(e->inferred);
  CHECK(e->value == "none");
  INFO(e->reason);
  CHECK(e->reason.find("a median 1.3") != std::string::npos);
  CHECK(e->reason.find("reading, not their own work, sets their pace") != std::string::npos);
}

TEST_CASE("fit client_costs: workers busy between loads but paced by the consumer") {
  // Each worker waits 400 ms after its batch: a slow consumer, whatever the client work.
  CostLoop l;
  l.wait_us = 400'000;
  const FitResult r = FitLoop(l);
  CHECK(Value(r, "reader.client_costs").find("not inferred") != std::string::npos);
  INFO(Reason(r));
  CHECK(Reason(r).find("they wait for the consumer") != std::string::npos);
}

TEST_CASE("fit client_costs: one process, its client work per batch against its compute") {
  CostLoop l;
  l.workers = 0;
  l.client_us = 5'000;
  l.compute_us = 2'000;  // 4 x 5 ms of client work per batch against 2 ms of compute
  const FitResult fast = FitLoop(l);
  CHECK(Value(fast, "reader.io_model") == "numpy");
  CHECK(Value(fast, "reader.client_costs") == "framework");
  CHECK(Reason(fast).find("/ 1 reader = 20.") != std::string::npos);
  l.compute_us = 200'000;  // the loop waits for its compute
  const FitResult slow = FitLoop(l);
  CHECK(Value(slow, "reader.client_costs").find("not inferred") != std::string::npos);
  CHECK(Reason(slow).find("is less than the 200 ms step (compute events)") != std::string::npos);
}

TEST_CASE("fit client_costs: the choices hold on a loaded host") {
  // Every time stretched 1-5x, 10% of them stalled by 60 ms (longer than any gap): the ratios
  // of medians stay on their side of 2x, and stalls make no period of the workers' pauses.
  for (uint32_t seed = 1; seed <= 8; ++seed) {
    CostLoop client;
    client.stretch = 5;
    client.stall_share = 0.1;
    client.seed = seed;
    CostLoop io = client;
    io.read_us = 5'000;
    io.client_us = 1'000;
    INFO("seed " << seed);
    CHECK(Value(FitLoop(client), "reader.client_costs") == "framework");
    CHECK(Value(FitLoop(io), "reader.client_costs").find("not inferred") != std::string::npos);
  }
}

// An I/O-bound DataLoader (the gaps say none) of 256 KiB reads, 64 pages each.
CostLoop FaultingLoop(int64_t faults, CostLoop::Faulting faulting) {
  CostLoop l;
  l.read_us = 5'000;
  l.client_us = 1'000;
  l.read_bytes = 256 << 10;
  l.faults = faults;
  l.faulting = faulting;
  return l;
}

TEST_CASE("fit client_costs: reads into fresh pages are client-bound inside the reads") {
  // Every page of every read faulted: a fresh allocation per read (torch_save_ckpt's zip chunks).
  const FitResult every = FitLoop(FaultingLoop(64, CostLoop::Faulting::kEveryRead));
  CHECK(Value(every, "reader.client_costs") == "framework");
  INFO(Reason(every));
  CHECK(Reason(every).find("client-bound inside its reads: 100.0% of the 30720 pages that 30 "
                           "sample reads filled faulted") != std::string::npos);
  // The share the emulation's reads are given, each reader's first read included.
  CHECK(Value(every, "reader.fresh_page_share") == "1.000");
  // Only each load's first read (np.load's array, glibc's heap reused after): 64 of 1024 pages
  // per load, 6.2%.
  const FitResult first = FitLoop(FaultingLoop(64, CostLoop::Faulting::kFirstOfLoad));
  CHECK(Value(first, "reader.client_costs") == "framework");
  CHECK(Reason(first).find(" 6.2% of the 30720 pages") != std::string::npos);
  CHECK(Value(first, "reader.fresh_page_share") == "0.062");
  INFO(Reason(first, "reader.fresh_page_share"));
  CHECK(Reason(first, "reader.fresh_page_share").find("2048 of the 32768 pages") !=
        std::string::npos);
}

TEST_CASE("fit client_costs: reads into memory already in place keep the gaps' choice") {
  // A buffer each worker allocated once: its first read faults (left out), then none.
  const FitResult once = FitLoop(FaultingLoop(64, CostLoop::Faulting::kFirstOfWorker));
  const FitEntry* e = once.Find("reader.client_costs");
  REQUIRE(e != nullptr);
  CHECK_FALSE(e->inferred);
  INFO(e->reason);
  CHECK(e->reason.find("reading, not their own work, sets their pace; the reads fill memory "
                       "already in place: 0.0% of the 30720 pages") != std::string::npos);
  // Under none no page is made fresh: the key is not written.
  CHECK(once.Find("reader.fresh_page_share") == nullptr);
  // No fault at all, and reads under 64 KiB (no counts): the gaps decide, as before.
  const FitResult none = FitLoop(FaultingLoop(0, CostLoop::Faulting::kEveryRead));
  CHECK(Value(none, "reader.client_costs").find("not inferred") != std::string::npos);
  CHECK(Reason(none).find(" 0.0% of the") != std::string::npos);
  CHECK(Reason(FitLoop({})).find("pages") == std::string::npos);
}

// One process loads `files` large arrays once, each into new memory (np.load of a few .npy
// files; CIFAR-10's pickled batches alike): a 4 KiB head, then one read of 4 MiB (every page
// faulted) and a 4 KiB fill at the end, 2 ms apart.
ProfileTrace WholeFileLoads(int files) {
  ProfileTrace t;
  int64_t now = 1'000'000;
  constexpr int64_t kBig = 4 << 20;
  for (int f = 0; f < files; ++f) {
    const std::string path = "/d/train/batch_" + std::to_string(f + 1) + ".npy";
    AddEvent(&t, 100, 100, "open64", now, 2, path);
    AddEvent(&t, 100, 100, "read", now + 5, 3, path, 0, 4096, 4096);
    AddEvent(&t, 100, 100, "read", now + 10, 3'000, path, 4096, kBig, kBig, kBig / 4096);
    AddEvent(&t, 100, 100, "read", now + 3'020, 3, path, 4096 + kBig, 4096, 300);
    AddEvent(&t, 100, 100, "close", now + 3'030, 1, path);
    now += 5'000;
  }
  return t;
}

TEST_CASE("fit client_costs: a few whole-file loads into fresh pages are client-bound") {
  // Five files: four reads counted past the first, every page faulted (too few gaps for the gap
  // rule).
  const FitResult five = Fit(WholeFileLoads(5));
  INFO(Reason(five));
  CHECK(Value(five, "reader.client_costs") == "framework");
  CHECK(Reason(five).find("100.0% of the 4096 pages that 4 sample reads filled") !=
        std::string::npos);
  // Three files: two reads counted tell nothing; the gap rule has too few gaps as well.
  const FitResult three = Fit(WholeFileLoads(3));
  CHECK(Value(three, "reader.client_costs").find("not inferred") != std::string::npos);
  CHECK(Reason(three).find("too few to tell client work from I/O") != std::string::npos);
}

// DataLoader workers made anew each pass, each allocating one 2 MiB buffer on its first sample
// and reading every .npy's data into it (a 4 KiB fill for the header, then one read of the
// rest): only each worker's first big read faults, all its pages.
ProfileTrace FirstReadFaults(int workers, int files) {
  ProfileTrace t;
  constexpr int64_t kData = 2 << 20;
  int64_t now = 1'000'000;
  for (int pass = 0; pass < 2; ++pass) {
    for (int i = 0; i < files; ++i) {
      const int w = (i / kBatch) % workers;
      const int32_t pid = 100 + 10 * pass + w;
      const bool first = i == w * kBatch;  // the worker's first load of the pass
      const std::string path = "/d/train/img_" + std::to_string((i * 5 + pass) % files) + ".npy";
      AddEvent(&t, pid, pid, "open64", now, 2, path);
      AddEvent(&t, pid, pid, "read", now + 5, 3, path, 0, 4096, 4096);
      AddEvent(&t, pid, pid, "read", now + 10, first ? 8'000 : 200, path, 4096, kData, kData,
               first ? kData / 4096 : 0);
      AddEvent(&t, pid, pid, "close", now + (first ? 8'020 : 220), 1, path);
      now += first ? 8'100 : 300;
    }
  }
  return t;
}

TEST_CASE(
    "fit client_costs: each worker's first read into a buffer new to it is given as a share") {
  // 2 workers a pass, 2 passes, 16 loads a pass: 4 of 32 reads fault all 512 pages (12.5%).
  const FitResult few = Fit(FirstReadFaults(2, 16));
  INFO(Reason(few));
  // Past each reader's first read nothing faults: no allocation per sample, no framework.
  CHECK(Value(few, "reader.client_costs").find("not inferred") != std::string::npos);
  CHECK(Reason(few).find("the reads fill memory already in place: 0.0% of the") !=
        std::string::npos);
  // The first reads' pages, as a share of all: the emulation's reads fault in as many.
  CHECK(Value(few, "reader.fresh_page_share") == "0.125");
  INFO(Reason(few, "reader.fresh_page_share"));
  CHECK(Reason(few, "reader.fresh_page_share").find("2048 of the 16384 pages") !=
        std::string::npos);
  // 96 loads a pass: the 4 first reads are 2.1% of the pages, under the 3% a read's time shows.
  const FitResult many = Fit(FirstReadFaults(2, 96));
  CHECK(Value(many, "reader.client_costs").find("not inferred") != std::string::npos);
  CHECK(many.Find("reader.fresh_page_share") == nullptr);
}

TEST_CASE("fit client_costs: fresh pages are counted, not timed: a loaded host changes nothing") {
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    CostLoop l = FaultingLoop(64, CostLoop::Faulting::kFirstOfLoad);
    l.stretch = 5;
    l.stall_share = 0.1;
    l.seed = seed;
    INFO("seed " << seed);
    CHECK(Value(FitLoop(l), "reader.client_costs") == "framework");
    l.faulting = CostLoop::Faulting::kFirstOfWorker;
    CHECK(Value(FitLoop(l), "reader.client_costs").find("not inferred") != std::string::npos);
  }
}

}  // namespace
}  // namespace dlio
