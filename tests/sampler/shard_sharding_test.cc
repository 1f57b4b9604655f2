// Sharding::kShard (WebDataset's split_by_node): whole files dealt round-robin over the ranks in
// the epoch's file order, each file's samples in order; with the window applied after the reads.
#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <vector>

#include "dlio/sampler.h"

namespace dlio {
namespace {

using Plan = std::vector<SampleRef>;

Plan PlanOf(const SamplerOptions& o, const std::vector<uint64_t>& files, uint64_t epoch, int rank,
            int world) {
  auto s = MakeSampler(o);
  REQUIRE(s.ok());
  PlanRequest r;
  r.epoch = epoch;
  r.rank = rank;
  r.world = world;
  r.samples_per_file = &files;
  Plan out;
  REQUIRE((*s)->Plan(r, &out).ok());
  return out;
}

// The files of `p` in the order it visits them, checking each is one run of all its samples
// 0..n-1 in order.
std::vector<uint32_t> WholeFiles(const Plan& p, const std::vector<uint64_t>& files) {
  std::vector<uint32_t> order;
  for (size_t i = 0; i < p.size();) {
    const uint32_t f = p[i].file;
    for (uint64_t k = 0; k < files[f]; ++k, ++i) {
      REQUIRE(i < p.size());
      REQUIRE(p[i].file == f);
      REQUIRE(p[i].index == k);
    }
    order.push_back(f);
  }
  return order;
}

const std::vector<uint64_t> kFiles = {3, 1, 4, 1, 5, 9, 2};  // 25 samples in 7 shards

TEST_CASE("shard sharding by hand: 7 shards over 3 ranks", "[sampler][shard]") {
  SamplerOptions o;
  o.sharding = Sharding::kShard;
  CHECK(WholeFiles(PlanOf(o, kFiles, 0, 0, 3), kFiles) == std::vector<uint32_t>{0, 3, 6});
  CHECK(WholeFiles(PlanOf(o, kFiles, 0, 1, 3), kFiles) == std::vector<uint32_t>{1, 4});
  CHECK(WholeFiles(PlanOf(o, kFiles, 0, 2, 3), kFiles) == std::vector<uint32_t>{2, 5});
  CHECK(PlanOf(o, kFiles, 0, 1, 3).size() == 6);
  auto parsed = ParseSharding("shard", "reader.sharding");
  REQUIRE(parsed.ok());
  CHECK(*parsed == Sharding::kShard);
  CHECK(std::string(ShardingName(Sharding::kShard)) == "shard");
}

TEST_CASE("shard sharding covers every sample once per epoch, whole shards, worlds 1..8",
          "[sampler][shard]") {
  // As AdaptSamplerToFormat sets it for webdataset: shard order shuffled per epoch, samples
  // shuffled through a window after the reads (the plan keeps each shard's order).
  for (const char* name : {"auto", "shuffle_buffer", "sequential"}) {
    SamplerOptions o;
    o.name = name;
    o.sharding = Sharding::kShard;
    o.file_shuffle = ShuffleMode::kSeed;
    o.sample_shuffle = ShuffleMode::kSeed;
    o.window_shuffle = true;
    o.shuffle_after_read = true;
    o.shuffle_size = 4;
    for (int world = 1; world <= 8; ++world) {
      for (uint64_t epoch : {0, 1, 5}) {
        INFO(name << " world " << world << " epoch " << epoch);
        std::map<std::pair<uint32_t, uint64_t>, int> seen;
        std::set<uint32_t> shards;
        for (int r = 0; r < world; ++r) {
          const Plan p = PlanOf(o, kFiles, epoch, r, world);
          for (uint32_t f : WholeFiles(p, kFiles)) CHECK(shards.insert(f).second);  // one rank
          for (const SampleRef& s : p) ++seen[{s.file, s.index}];
        }
        CHECK(seen.size() == 25);
        for (const auto& [ref, n] : seen) CHECK(n == 1);
      }
    }
  }
}

TEST_CASE("shard order is shuffled per epoch, reproducibly", "[sampler][shard]") {
  SamplerOptions o;
  o.sharding = Sharding::kShard;
  o.file_shuffle = ShuffleMode::kSeed;
  const auto e0 = WholeFiles(PlanOf(o, kFiles, 0, 0, 1), kFiles);
  const auto e1 = WholeFiles(PlanOf(o, kFiles, 1, 0, 1), kFiles);
  CHECK(e0 != e1);
  CHECK(e0 == WholeFiles(PlanOf(o, kFiles, 0, 0, 1), kFiles));
  o.seed_change_epoch = false;
  CHECK(WholeFiles(PlanOf(o, kFiles, 1, 0, 1), kFiles) == e0);
}

}  // namespace
}  // namespace dlio
