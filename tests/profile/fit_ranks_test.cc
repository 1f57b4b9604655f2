// FitTrace on hand-built traces of several MPI ranks: the per-rank values (batch, threads,
// compute) from each rank, the global ones (files, samples, epochs) from all, the sharding of the
// samples over the ranks and the ranks that checkpoint. A trace of one rank fits as it always did.
#include <algorithm>
#include <catch2/catch.hpp>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "dlio/config.h"
#include "dlio/profile_fit.h"
#include "profile/analysis_test_util.h"
#include "profile/fit_test_util.h"
#include "test_util.h"

namespace dlio {
namespace {

using fit_test::Fit;
using fit_test::Value;
using testing::AddEvent;

// `world` ranks (pid rank + 1, named as dlio-run names them) train in lockstep on `files` files
// of `samples` samples each, in name order, each rank its shard (block, round_robin or none as
// dlio's sampler cuts it) in batches of `batch` (per rank) read by `threads` threads, with a
// compute event after each batch; every `ckpt_every` steps the writing ranks save a file each.
struct RankLoop {
  int world = 2;
  int files = 8;
  int samples = 4;
  int64_t record = 100'000;
  int64_t header = 16;
  int batch = 4;
  int threads = 1;
  int epochs = 2;
  std::string sharding = "block";
  int64_t gap_us = 10'000;
  int ckpt_every = 0;
  bool ckpt_all_ranks = true;
  int64_t ckpt_bytes = 1 << 20;
  int odd_batch_rank = -1;  // this rank reads batches of 2 * batch (fewer steps)
  // Every epoch the global sample list is shuffled (seeded with the epoch, the same on every
  // rank) before it is sharded: PyTorch's DistributedSampler, which gives a rank other samples
  // in every epoch.
  bool global_shuffle = false;
  // Every epoch each rank shuffles its own shard (the same files every epoch, seeded with the
  // epoch): a fixed shard read in a new order.
  bool local_shuffle = false;

  std::string File(int f) const { return "/data/train/f_" + std::to_string(f) + ".npz"; }
  // The samples (file, sample) of rank r in epoch e.
  std::vector<std::pair<int, int>> Shard(int r, int e) const {
    std::vector<std::pair<int, int>> out;
    const int total = files * samples, base = total / world;
    std::vector<int> order(static_cast<size_t>(total));
    std::iota(order.begin(), order.end(), 0);
    if (global_shuffle) std::shuffle(order.begin(), order.end(), std::mt19937(1234u + e));
    for (int p = 0; p < total; ++p) {
      const bool mine = sharding == "none"          ? true
                        : sharding == "round_robin" ? p % world == r
                                                    : p >= r * base && p < (r + 1) * base;
      const int at = order[static_cast<size_t>(p)];
      if (mine) out.push_back({at / samples, at % samples});
    }
    if (local_shuffle) std::shuffle(out.begin(), out.end(), std::mt19937(99u + e));
    return out;
  }
};

ProfileTrace Build(const RankLoop& l) {
  ProfileTrace t;
  for (int r = 0; r < l.world; ++r) {
    t.process_names[r + 1] = "dlio rank " + std::to_string(r);
    t.ranks[r + 1] = r;
  }
  int64_t now = 1'000'000;
  int step = 0;
  for (int e = 0; e < l.epochs; ++e) {
    for (size_t b = 0;; b += static_cast<size_t>(l.batch)) {
      bool any = false;
      int64_t end = now;
      for (int r = 0; r < l.world; ++r) {
        const std::vector<std::pair<int, int>> shard = l.Shard(r, e);
        const int batch = r == l.odd_batch_rank ? 2 * l.batch : l.batch;
        const size_t first = r == l.odd_batch_rank ? 2 * b : b;
        if (first + static_cast<size_t>(batch) > shard.size()) continue;
        any = true;
        const int32_t pid = r + 1;
        for (int k = 0; k < batch; ++k) {
          const auto [f, s] = shard[first + static_cast<size_t>(k)];
          const int th = k % l.threads;
          const int64_t at = now + r * 7 + (k / l.threads) * 50;
          AddEvent(&t, pid, 10 + th, "open64", at, 2, l.File(f));
          const int64_t offset = l.header + s * (l.record + l.header);
          AddEvent(&t, pid, 10 + th, "pread", at + 5, 40, l.File(f), offset, l.record, l.record);
          end = std::max(end, at + 45);
        }
        AddEvent(&t, pid, 1, "ai.compute.step", end + 2, l.gap_us);
      }
      if (!any) break;
      now = end + l.gap_us + 100;
      ++step;
      if (l.ckpt_every > 0 && step % l.ckpt_every == 0) {
        for (int r = 0; r < (l.ckpt_all_ranks ? l.world : 1); ++r) {
          const std::string path =
              "/ckpt/step" + std::to_string(step) + "/rank" + std::to_string(r) + ".bin";
          AddEvent(&t, r + 1, 1, "open64", now, 2, path);
          AddEvent(&t, r + 1, 1, "pwrite", now + 3, 10, path, 0, l.ckpt_bytes / 2,
                   l.ckpt_bytes / 2);
          AddEvent(&t, r + 1, 1, "pwrite", now + 14, 10, path, l.ckpt_bytes / 2, l.ckpt_bytes / 2,
                   l.ckpt_bytes / 2);
        }
        now += 1000;
      }
    }
  }
  return t;
}

TEST_CASE("fit ranks: two ranks, block sharding: batch and threads per rank, files global") {
  RankLoop l;
  l.threads = 2;
  const FitResult r = Fit(Build(l));
  CHECK(r.ranks == 2);
  CHECK(Value(r, "dataset.num_files_train") == "8");
  CHECK(Value(r, "dataset.num_samples_per_file") == "4");
  CHECK(Value(r, "train.epochs") == "2");
  // One rank's: all ranks' reads over one rank's steps would be a batch of 8 in 4 threads.
  CHECK(Value(r, "reader.batch_size") == "4");
  CHECK(Value(r, "reader.read_threads") == "2");
  CHECK(Value(r, "reader.data_loader") != "pytorch");  // two ranks are not two DataLoader workers
  CHECK(std::stod(Value(r, "train.computation_time")) == Approx(0.01).epsilon(0.01));
  CHECK(Value(r, "reader.sharding") == "block");
  CHECK(r.Find("reader.batch_size")->reason.find("the same on all 2 ranks") != std::string::npos);
  CHECK(r.Find("train.total_training_steps") == nullptr);  // 4 steps per epoch are all of them
  const std::string yaml = FitYaml(r, {"test"});
  CHECK(yaml.find("mpirun -n 2 dlio-run --config") != std::string::npos);
  auto c = ParseConfig(yaml, "fit.yaml");
  INFO(c.status().ToString());
  REQUIRE(c.ok());
  CHECK(c->reader.batch_size == 4);
  CHECK(c->dataset.num_files_train == 8);
}

TEST_CASE("fit ranks: the sharding mode from which rank read which samples") {
  RankLoop l;
  SECTION("round robin splits every file") {
    l.sharding = "round_robin";
    CHECK(Value(Fit(Build(l)), "reader.sharding") == "round_robin");
  }
  SECTION("none: every rank reads every sample") {
    l.sharding = "none";
    const FitResult r = Fit(Build(l));
    CHECK(Value(r, "reader.sharding") == "none");
    CHECK(Value(r, "dataset.num_files_train") == "8");
    CHECK(Value(r, "reader.batch_size") == "4");
  }
  SECTION("one sample per file, in name order: a run of files each, or every other file") {
    l.samples = 1;
    l.files = 16;
    l.batch = 2;
    CHECK(Value(Fit(Build(l)), "reader.sharding") == "block");
    l.sharding = "round_robin";
    CHECK(Value(Fit(Build(l)), "reader.sharding") == "round_robin");
  }
  SECTION("four ranks, block") {
    l.world = 4;
    l.files = 16;
    const FitResult r = Fit(Build(l));
    CHECK(r.ranks == 4);
    CHECK(Value(r, "reader.sharding") == "block");
    CHECK(Value(r, "dataset.num_files_train") == "16");
    CHECK(Value(r, "reader.batch_size") == "4");
  }
}

TEST_CASE("fit ranks: a global shuffle per epoch gives each rank other samples in each pass") {
  // N ranks take every N-th sample of a list shuffled anew each epoch: a rank re-reads some of
  // its earlier epochs' samples, so its own reads make no passes (the 90% rule would end its
  // first late in its second epoch or after); the run's passes are the merged reads'. Each
  // sample is read by one rank a pass: sharded, not replicated (which emulates N times the
  // reads), and a rank's steps per epoch are its share's.
  RankLoop l;
  l.samples = 1;
  l.files = 48;
  l.batch = 4;
  l.sharding = "round_robin";
  l.global_shuffle = true;
  std::tie(l.world, l.epochs) = GENERATE(std::make_pair(2, 2), std::make_pair(2, 3),
                                         std::make_pair(4, 2), std::make_pair(4, 3));
  INFO(l.world << " ranks, " << l.epochs << " epochs");
  const FitResult r = Fit(Build(l));
  CHECK(r.ranks == l.world);
  CHECK(Value(r, "train.epochs") == std::to_string(l.epochs));
  CHECK(Value(r, "dataset.num_files_train") == "48");
  CHECK(Value(r, "reader.batch_size") == "4");
  CHECK(Value(r, "reader.file_shuffle") == "seed");
  // Shuffled files of one sample each: block and round robin cut alike (dlio's default stays).
  const FitEntry* sharding = r.Find("reader.sharding");
  REQUIRE(sharding != nullptr);
  CHECK_FALSE(sharding->inferred);
  CHECK(sharding->value == "block");
  CHECK(r.Find("train.total_training_steps") == nullptr);  // every rank's steps: all of them
}

TEST_CASE("fit ranks: each rank keeps its shard of files and shuffles it every epoch") {
  // Files of one sample each, a fixed shard per rank (a run of files, or every other file) read
  // in a new order every epoch: dlio's sharding of the name-ordered list, then its rank-local
  // shuffle, so that each emulated rank too reads the same files every epoch.
  RankLoop l;
  l.samples = 1;
  l.files = 48;
  l.local_shuffle = true;
  l.sharding = GENERATE(std::string("block"), std::string("round_robin"));
  INFO(l.sharding);
  const FitResult r = Fit(Build(l));
  CHECK(Value(r, "train.epochs") == "2");
  CHECK(Value(r, "reader.batch_size") == "4");
  CHECK(Value(r, "reader.sharding") == l.sharding);
  CHECK(Value(r, "reader.file_shuffle") == "off");
  CHECK(Value(r, "reader.sample_shuffle") == "seed");
  auto c = ParseConfig(FitYaml(r, {"test"}), "fit.yaml");
  INFO(c.status().ToString());
  REQUIRE(c.ok());
  CHECK(c->reader.file_shuffle == ShuffleMode::kOff);
  CHECK(c->reader.sample_shuffle == ShuffleMode::kSeed);
}

TEST_CASE("fit ranks: checkpoints of every rank or of rank 0 alone") {
  RankLoop l;
  l.ckpt_every = 2;
  SECTION("all ranks: each its share, the model size their sum") {
    const FitResult r = Fit(Build(l));
    CHECK(Value(r, "workflow.checkpoint") == "true");
    CHECK(Value(r, "checkpoint.rank_mode") == "all");
    CHECK(Value(r, "checkpoint.model_size_bytes") == std::to_string(2 * l.ckpt_bytes));
    CHECK(Value(r, "checkpoint.model_files") == "1");
    CHECK(Value(r, "checkpoint.steps_between_checkpoints") == "2");
  }
  SECTION("rank zero only") {
    l.ckpt_all_ranks = false;
    const FitResult r = Fit(Build(l));
    CHECK(Value(r, "checkpoint.rank_mode") == "root");
    CHECK(Value(r, "checkpoint.model_size_bytes") == std::to_string(l.ckpt_bytes));
  }
}

TEST_CASE("fit ranks: a rank that differs is named in a note") {
  RankLoop l;
  l.odd_batch_rank = 1;
  const FitResult r = Fit(Build(l));
  CHECK(Value(r, "reader.batch_size") == "4");  // rank 0's
  bool noted = false;
  for (const std::string& n : r.notes) {
    noted = noted || n.find("rank 1 differs: reader.batch_size 8") != std::string::npos;
  }
  CHECK(noted);
  CHECK(r.Find("reader.batch_size")->reason.find("ranks 1 differ") != std::string::npos);
}

TEST_CASE("fit ranks: one rank fits exactly as a trace without ranks") {
  RankLoop l;
  l.world = 1;
  l.threads = 2;
  const ProfileTrace ranked = Build(l);
  ProfileTrace plain = ranked;
  plain.ranks.clear();
  plain.process_names.clear();
  const FitResult a = Fit(ranked), b = Fit(plain);
  CHECK(a.ranks == 1);
  CHECK(FitYaml(a, {"t"}) == FitYaml(b, {"t"}));
  CHECK(a.Find("reader.sharding") == nullptr);
}

TEST_CASE("fit ranks: a checkpoint-only run of two ranks (torch.save on every rank, or rank 0)") {
  const bool all = GENERATE(true, false);
  ProfileTrace t;
  for (int r = 0; r < 2; ++r) {
    t.process_names[r + 1] = "python3 (rank " + std::to_string(r) + ")";
    t.ranks[r + 1] = r;
    AddEvent(&t, r + 1, 1, "stat", 1000, 1, "/usr/lib/python3/os.py");  // both ranks are traced
  }
  constexpr int64_t kBytes = 1 << 20;
  for (int save = 0; save < 3; ++save) {
    for (int r = 0; r < (all ? 2 : 1); ++r) {
      const std::string path =
          "/ckpt/step" + std::to_string(save) + "_rank" + std::to_string(r) + ".pt";
      const int64_t at = 1'000'000 + save * 50'000 + r * 10;
      AddEvent(&t, r + 1, 1, "open64", at, 2, path);
      AddEvent(&t, r + 1, 1, "pwrite", at + 3, 100, path, 0, kBytes, kBytes);
      AddEvent(&t, r + 1, 1, "close", at + 110, 1, path);
    }
  }
  const FitResult r = Fit(t);
  CHECK(r.ranks == 2);
  CHECK(Value(r, "workflow.train") == "false");
  CHECK(Value(r, "workflow.checkpoint") == "true");
  CHECK(Value(r, "checkpoint.num_checkpoints_write") == "3");
  CHECK(Value(r, "checkpoint.model_files") == "1");  // per rank (the whole run writes 2 a save)
  CHECK(Value(r, "checkpoint.model_size_bytes") == std::to_string((all ? 2 : 1) * kBytes));
  CHECK(Value(r, "checkpoint.rank_mode") == (all ? "all" : "root"));
}

TEST_CASE("fit ranks: a Darshan DXT log of two ranks is fitted per rank") {
  // Each rank reads its 4 files (block sharding) in bursts of 2 whole-file reads, 20 ms apart.
  std::string text = "# darshan log version: 3.41\n# start_time: 1700000000\n";
  for (int r = 0; r < 2; ++r) {
    for (int f = 4 * r; f < 4 * r + 4; ++f) {
      text += "\n# DXT, file_id: " + std::to_string(f + 1) + ", file_name: /data/train/f_" +
              std::to_string(f) + ".npz\n# DXT, rank: " + std::to_string(r) + ", hostname: node" +
              std::to_string(r) +
              "\n# Module    Rank  Wt/Rd  Segment  Offset  Length  Start(s)  End(s)\n";
      for (int e = 0; e < 2; ++e) {
        const double at = 1.0 * e + 0.02 * ((f - 4 * r) / 2) + 0.0002 * (f % 2);
        text += " X_POSIX " + std::to_string(r) + " read " + std::to_string(e) + " 0 100000 " +
                std::to_string(at) + " " + std::to_string(at + 0.0001) + "\n";
      }
    }
  }
  testing::TempDir dir;
  testing::WriteTextFile(dir / "dxt.txt", text);
  ProfileTrace t;
  auto stats = ImportDxt(dir / "dxt.txt", &t);
  INFO(stats.status().ToString());
  REQUIRE(stats.ok());
  const FitResult r = Fit(t);
  CHECK(r.ranks == 2);
  CHECK(Value(r, "dataset.num_files_train") == "8");
  CHECK(Value(r, "train.epochs") == "2");
  CHECK(Value(r, "reader.read_threads") == "1");  // one per rank, not two
  CHECK(Value(r, "reader.batch_size") == "2");
  CHECK(Value(r, "reader.sharding") == "block");
}

}  // namespace
}  // namespace dlio
