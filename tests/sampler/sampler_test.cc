#include "dlio/sampler.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "dlio/registries.h"

namespace dlio {

std::ostream& operator<<(std::ostream& os, const SampleRef& r) {
  return os << r.file << ":" << r.index;
}

namespace {

using Plan = std::vector<SampleRef>;

std::unique_ptr<Sampler> Make(SamplerOptions o) {
  auto s = MakeSampler(o);
  REQUIRE(s.ok());
  return std::move(s).value();
}

Plan PlanOf(const Sampler& s, const std::vector<uint64_t>& files, uint64_t epoch = 0, int rank = 0,
            int world = 1) {
  PlanRequest r;
  r.epoch = epoch;
  r.rank = rank;
  r.world = world;
  r.samples_per_file = &files;
  Plan out;
  Status st = s.Plan(r, &out);
  REQUIRE(st.ok());
  return out;
}

Plan FileMajor(const std::vector<uint64_t>& files) {
  Plan out;
  for (uint32_t f = 0; f < files.size(); ++f)
    for (uint64_t i = 0; i < files[f]; ++i) out.push_back({f, i});
  return out;
}

Plan Sorted(Plan p) {
  std::sort(p.begin(), p.end());
  return p;
}

// All ranks of one epoch: every sample exactly once, sizes differing by at most 1 (first
// `total % world` ranks get the extra one).
void CheckCoverage(const Sampler& s, const std::vector<uint64_t>& files, int world,
                   uint64_t epoch = 0) {
  Plan all;
  const uint64_t total = FileMajor(files).size();
  for (int r = 0; r < world; ++r) {
    Plan p = PlanOf(s, files, epoch, r, world);
    const uint64_t expect = total / world + (static_cast<uint64_t>(r) < total % world ? 1 : 0);
    INFO("world " << world << " rank " << r);
    CHECK(p.size() == expect);
    all.insert(all.end(), p.begin(), p.end());
  }
  CHECK(Sorted(all) == FileMajor(files));
}

const std::vector<uint64_t> kUneven = {3, 1, 4, 1, 5};  // 14 samples

TEST_CASE("sequential plan is the file-major order", "[sampler]") {
  auto s = Make({});  // auto with modes off -> sequential
  CHECK(PlanOf(*s, kUneven) == FileMajor(kUneven));
  SamplerOptions o;
  o.name = "sequential";
  o.file_shuffle = ShuffleMode::kSeed;  // ignored by sequential
  o.sample_shuffle = ShuffleMode::kSeed;
  CHECK(PlanOf(*Make(o), kUneven, 3) == FileMajor(kUneven));
}

TEST_CASE("block sharding by hand: 14 samples over 3 ranks", "[sampler]") {
  auto s = Make({});
  // Global list: f0:0,1,2 f1:0 f2:0..3 f3:0 f4:0..4; blocks of 5, 5, 4.
  CHECK(PlanOf(*s, kUneven, 0, 0, 3) == Plan{{0, 0}, {0, 1}, {0, 2}, {1, 0}, {2, 0}});
  CHECK(PlanOf(*s, kUneven, 0, 1, 3) == Plan{{2, 1}, {2, 2}, {2, 3}, {3, 0}, {4, 0}});
  CHECK(PlanOf(*s, kUneven, 0, 2, 3) == Plan{{4, 1}, {4, 2}, {4, 3}, {4, 4}});
}

TEST_CASE("round robin by hand: 14 samples over 4 ranks", "[sampler]") {
  SamplerOptions o;
  o.sharding = Sharding::kRoundRobin;
  auto s = Make(o);
  // Positions 0..13; rank 1 takes 1, 5, 9, 13.
  CHECK(PlanOf(*s, kUneven, 0, 1, 4) == Plan{{0, 1}, {2, 1}, {4, 0}, {4, 4}});
  CHECK(PlanOf(*s, kUneven, 0, 3, 4) == Plan{{1, 0}, {2, 3}, {4, 2}});
}

TEST_CASE("every sharding and sampler covers every sample once, worlds 1..5", "[sampler]") {
  for (const char* name : {"sequential", "shuffle", "shuffle_buffer"}) {
    for (Sharding sh : {Sharding::kBlock, Sharding::kRoundRobin}) {
      SamplerOptions o;
      o.name = name;
      o.sharding = sh;
      o.file_shuffle = ShuffleMode::kSeed;
      o.sample_shuffle = ShuffleMode::kSeed;
      o.shuffle_size = 3;
      auto s = Make(o);
      for (int world = 1; world <= 5; ++world) {
        INFO(name << " " << ShardingName(sh));
        CheckCoverage(*s, kUneven, world, 0);
        CheckCoverage(*s, kUneven, world, 7);
      }
      CheckCoverage(*s, {2, 0, 3}, 9);  // more ranks than samples, an empty file
    }
  }
}

TEST_CASE("sharding none gives every rank the whole dataset, shuffled per rank", "[sampler]") {
  SamplerOptions o;
  o.sharding = Sharding::kNone;
  CHECK(PlanOf(*Make(o), kUneven, 0, 2, 3) == FileMajor(kUneven));
  o.sample_shuffle = ShuffleMode::kSeed;
  auto s = Make(o);
  const Plan r0 = PlanOf(*s, kUneven, 0, 0, 3);
  const Plan r1 = PlanOf(*s, kUneven, 0, 1, 3);
  CHECK(Sorted(r0) == FileMajor(kUneven));
  CHECK(Sorted(r1) == FileMajor(kUneven));
  CHECK(r0 != r1);  // each rank draws its own order
}

TEST_CASE("interleave alternates k files, each read in order, as tf.data's interleave",
          "[sampler]") {
  SamplerOptions o;
  o.interleave = 2;
  // Files of 3, 1, 2 samples: cycle {f0, f1}; f1 ends and f2 takes its place.
  CHECK(PlanOf(*Make(o), {3, 1, 2}) == Plan{{0, 0}, {1, 0}, {0, 1}, {2, 0}, {0, 2}, {2, 1}});
  // With shuffled files and several ranks, each rank's files stay in order within themselves.
  o.file_shuffle = ShuffleMode::kSeed;
  o.interleave = 3;
  const std::vector<uint64_t> files(12, 5);
  for (int r = 0; r < 2; ++r) {
    const Plan p = PlanOf(*Make(o), files, 1, r, 2);
    CHECK(p.size() == 30);
    std::map<uint32_t, uint64_t> next;
    for (const auto& ref : p) CHECK(ref.index == next[ref.file]++);
    CHECK(p[0].file != p[1].file);
    CHECK(p[1].file != p[2].file);
    CHECK(p[0].file == p[3].file);
  }
  o.interleave = 1;  // off, as 0
  const Plan one = PlanOf(*Make(o), files, 1, 0, 2);
  o.interleave = 0;
  CHECK(one == PlanOf(*Make(o), files, 1, 0, 2));
}

TEST_CASE("interleave in blocks: each worker's batches come from its own shards", "[sampler]") {
  SamplerOptions o;
  o.interleave = 2;
  o.interleave_block = 2;
  // Files of 3, 1, 4 samples, blocks of 2: f0 gives 2, f1 its one and f2 (its successor) the
  // rest of the block, f0 its last and f2 the next, then f2 alone.
  CHECK(PlanOf(*Make(o), {3, 1, 4}) ==
        Plan{{0, 0}, {0, 1}, {1, 0}, {2, 0}, {0, 2}, {2, 1}, {2, 2}, {2, 3}});
  // Shards of 8, 2 slots, batches of 4: batch k (worker k mod 2) holds one slot's samples only.
  o.interleave_block = 4;
  const Plan p = PlanOf(*Make(o), std::vector<uint64_t>(4, 8));
  REQUIRE(p.size() == 32);
  std::map<size_t, std::set<uint32_t>> files_of_worker;
  for (size_t i = 0; i < p.size(); ++i) files_of_worker[(i / 4) % 2].insert(p[i].file);
  CHECK(files_of_worker[0] == std::set<uint32_t>{0, 2});
  CHECK(files_of_worker[1] == std::set<uint32_t>{1, 3});
}

TEST_CASE("read fraction keeps the first ceil(f x n) of a rank's order", "[sampler]") {
  const std::vector<uint64_t> files(6, 10);  // 60 samples
  SamplerOptions o;
  o.fraction = 1.0 / 3;
  const Plan all = FileMajor(files);
  CHECK(PlanOf(*Make(o), files) == Plan(all.begin(), all.begin() + 20));
  o.sample_shuffle = ShuffleMode::kSeed;
  o.sharding = Sharding::kNone;
  auto s = Make(o);
  const Plan e0 = PlanOf(*s, files, 0, 0, 4);
  const Plan e1 = PlanOf(*s, files, 1, 0, 4);
  const Plan other_rank = PlanOf(*s, files, 0, 1, 4);
  CHECK(e0.size() == 20);
  CHECK(std::set<SampleRef>(e0.begin(), e0.end()).size() == 20);  // distinct samples
  CHECK(Sorted(e0) != Sorted(e1));                                // a new third every epoch
  CHECK(Sorted(e0) != Sorted(other_rank));                        // and per rank
  o.fraction = 0.001;                                             // never less than one sample
  CHECK(PlanOf(*Make(o), files).size() == 1);
  for (double bad : {0.0, -0.5, 1.5}) {
    o.fraction = bad;
    auto made = MakeSampler(o);
    REQUIRE_FALSE(made.ok());
    CHECK(made.status().message().find("reader.read_fraction") != std::string::npos);
  }
  o.fraction = 1.5;  // the value in shortest form, not std::to_string's "1.500000"
  CHECK(MakeSampler(o).status().message() == "reader.read_fraction must be in (0, 1], got 1.5");
}

TEST_CASE("block sharding with divisible files gives whole files per rank", "[sampler]") {
  const std::vector<uint64_t> files(8, 4);  // 8 files of 4 samples, 4 ranks: 2 files each
  for (ShuffleMode fs : {ShuffleMode::kOff, ShuffleMode::kSeed}) {
    SamplerOptions o;
    o.file_shuffle = fs;
    auto s = Make(o);
    std::set<uint32_t> seen;
    for (int r = 0; r < 4; ++r) {
      Plan p = PlanOf(*s, files, 1, r, 4);
      REQUIRE(p.size() == 8);
      std::map<uint32_t, int> per_file;
      for (auto ref : p) per_file[ref.file]++;
      CHECK(per_file.size() == 2);
      for (auto [f, n] : per_file) {
        CHECK(n == 4);
        CHECK(seen.insert(f).second);
      }
    }
    CHECK(seen.size() == 8);
  }
}

TEST_CASE("sample shuffle: permutation, reproducible, changes per epoch and rank", "[sampler]") {
  const std::vector<uint64_t> files(10, 20);
  SamplerOptions o;
  o.sample_shuffle = ShuffleMode::kSeed;
  auto s = Make(o);  // auto -> shuffle
  Plan e0 = PlanOf(*s, files, 0);
  CHECK(Sorted(e0) == FileMajor(files));
  CHECK(e0 != FileMajor(files));
  CHECK(PlanOf(*Make(o), files, 0) == e0);  // a fresh sampler, the same (seed, epoch, rank)
  Plan e1 = PlanOf(*s, files, 1);
  CHECK(Sorted(e1) == FileMajor(files));
  CHECK(e1 != e0);
  // Two ranks shuffle their own blocks differently, but each only within its block.
  Plan r0 = PlanOf(*s, files, 0, 0, 2), r1 = PlanOf(*s, files, 0, 1, 2);
  for (auto ref : r0) CHECK(ref.file < 5);
  for (auto ref : r1) CHECK(ref.file >= 5);
  o.seed = 124;
  CHECK(PlanOf(*Make(o), files, 0) != e0);
  o.seed = 123;
  o.seed_change_epoch = false;
  auto fixed = Make(o);
  CHECK(PlanOf(*fixed, files, 0) == PlanOf(*fixed, files, 5));
  CHECK(PlanOf(*fixed, files, 0) == e0);
}

TEST_CASE("random mode mixes the run's random seed", "[sampler]") {
  const std::vector<uint64_t> files(10, 20);
  SamplerOptions o;
  o.sample_shuffle = ShuffleMode::kRandom;
  o.random_seed = 1;
  Plan a = PlanOf(*Make(o), files);
  o.random_seed = 2;
  Plan b = PlanOf(*Make(o), files);
  CHECK(a != b);
  CHECK(Sorted(a) == Sorted(b));
}

TEST_CASE("file shuffle keeps each file's samples together and in order", "[sampler]") {
  const std::vector<uint64_t> files = {3, 5, 2, 4, 6, 1, 3, 2};
  SamplerOptions o;
  o.file_shuffle = ShuffleMode::kSeed;
  auto s = Make(o);
  std::vector<std::vector<uint32_t>> orders;
  for (uint64_t epoch = 0; epoch < 3; ++epoch) {
    Plan p = PlanOf(*s, files, epoch);
    CHECK(Sorted(p) == FileMajor(files));
    std::vector<uint32_t> order;
    for (size_t i = 0; i < p.size(); ++i) {
      if (i == 0 || p[i].file != p[i - 1].file) {
        order.push_back(p[i].file);
        CHECK(p[i].index == 0);
      } else {
        CHECK(p[i].index == p[i - 1].index + 1);
      }
    }
    CHECK(order.size() == files.size());  // each file appears as one run
    orders.push_back(order);
  }
  CHECK(orders[0] != orders[1]);
  CHECK(orders[1] != orders[2]);
  std::vector<uint32_t> identity(files.size());
  for (uint32_t f = 0; f < identity.size(); ++f) identity[f] = f;
  CHECK(orders[0] != identity);
}

TEST_CASE("shuffle_buffer: size 1 is sequential, larger is a local permutation", "[sampler]") {
  const std::vector<uint64_t> files(10, 20);  // 200 samples
  SamplerOptions o;
  o.name = "shuffle_buffer";
  o.shuffle_size = 1;
  CHECK(PlanOf(*Make(o), files, 2) == FileMajor(files));
  o.shuffle_size = 16;
  auto s = Make(o);
  Plan p = PlanOf(*s, files, 0);
  CHECK(p != FileMajor(files));
  CHECK(Sorted(p) == FileMajor(files));
  CHECK(PlanOf(*s, files, 0) == p);
  CHECK(PlanOf(*s, files, 1) != p);
  // A streaming window of 16 can only emit input position k at output position >= k - 15.
  const Plan seq = FileMajor(files);
  for (size_t out_pos = 0; out_pos < p.size(); ++out_pos) {
    const size_t in_pos = std::find(seq.begin(), seq.end(), p[out_pos]) - seq.begin();
    CHECK(in_pos <= out_pos + 15);
  }
  o.shuffle_size = 0;
  auto bad = MakeSampler(o);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().find("reader.shuffle_size") != std::string::npos);
}

TEST_CASE("Plan reuses the output buffer and rejects bad requests", "[sampler]") {
  const std::vector<uint64_t> files(4, 8);
  auto s = Make({});
  PlanRequest r;
  r.samples_per_file = &files;
  Plan out;
  out.reserve(64);
  const auto* data = out.data();
  REQUIRE(s->Plan(r, &out).ok());
  CHECK(out.size() == 32);
  REQUIRE(s->Plan(r, &out).ok());
  CHECK(out.size() == 32);
  CHECK(out.data() == data);

  r.rank = 2;
  r.world = 2;
  Status st = s->Plan(r, &out);
  CHECK(st.code() == StatusCode::kInvalidArgument);
  CHECK(st.message().find("rank 2") != std::string::npos);
  r.rank = 0;
  r.world = 0;
  CHECK_FALSE(s->Plan(r, &out).ok());
  r.world = 1;
  r.samples_per_file = nullptr;
  CHECK(s->Plan(r, &out).message().find("samples_per_file") != std::string::npos);
}

TEST_CASE("ParseShuffleMode and ParseSharding", "[sampler]") {
  CHECK(*ParseShuffleMode("off", "k") == ShuffleMode::kOff);
  CHECK(*ParseShuffleMode("False", "k") == ShuffleMode::kOff);
  CHECK(*ParseShuffleMode("SEED", "k") == ShuffleMode::kSeed);
  CHECK(*ParseShuffleMode("True", "k") == ShuffleMode::kSeed);
  CHECK(*ParseShuffleMode("on", "k") == ShuffleMode::kSeed);
  CHECK(*ParseShuffleMode("Random", "k") == ShuffleMode::kRandom);
  auto bad = ParseShuffleMode("sometimes", "reader.file_shuffle");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == StatusCode::kInvalidArgument);
  CHECK(bad.status().message().find("reader.file_shuffle") == 0);
  CHECK(bad.status().message().find("'sometimes'") != std::string::npos);
  CHECK(bad.status().message().find("off, seed, random") != std::string::npos);

  CHECK(*ParseSharding("block", "k") == Sharding::kBlock);
  CHECK(*ParseSharding("Round_Robin", "k") == Sharding::kRoundRobin);
  auto bad2 = ParseSharding("stripes", "reader.sharding");
  REQUIRE_FALSE(bad2.ok());
  CHECK(bad2.status().message() ==
        "reader.sharding: unknown sharding 'stripes' (accepted: block, round_robin, none, shard)");
  CHECK(*ParseSharding("none", "k") == Sharding::kNone);
  CHECK(*ParseSharding("Replicated", "k") == Sharding::kNone);
  CHECK(std::string(ShardingName(Sharding::kNone)) == "none");
  CHECK(std::string(ShuffleModeName(ShuffleMode::kRandom)) == "random");
}

TEST_CASE("a plan too large for memory is an error, not an exception", "[sampler]") {
  // 2^63 samples: more than a vector can hold, refused before anything is allocated.
  const std::vector<uint64_t> per_file = {uint64_t{1} << 62, uint64_t{1} << 62};
  for (const char* name : {"sequential", "shuffle"}) {
    SamplerOptions o;
    o.name = name;
    auto sampler = MakeSampler(o);
    REQUIRE(sampler.ok());
    PlanRequest req;
    req.samples_per_file = &per_file;
    std::vector<SampleRef> plan;
    Status st = (*sampler)->Plan(req, &plan);
    INFO(name);
    CHECK(st.code() == StatusCode::kResourceExhausted);
    CHECK(st.message().find("dataset.num_files_* x dataset.num_samples_per_file") !=
          std::string::npos);
    CHECK(plan.empty());
  }
  const std::vector<uint64_t> overflow = {UINT64_MAX, 2};
  PlanRequest req;
  req.samples_per_file = &overflow;
  std::vector<SampleRef> plan;
  CHECK((*MakeSampler(SamplerOptions{}))->Plan(req, &plan).code() == StatusCode::kInvalidArgument);
}

TEST_CASE("registry holds the built-in samplers", "[sampler]") {
  Registries reg;
  REQUIRE(RegisterBuiltinSamplers(&reg.samplers).ok());
  for (const char* name : {"auto", "sequential", "shuffle", "shuffle_buffer"}) {
    INFO(name);
    CHECK(reg.samplers.Contains(name));
  }
  auto f = reg.samplers.Get("shuffle");
  REQUIRE(f.ok());
  SamplerOptions o;  // name "auto", modes off, but the "shuffle" entry builds a shuffle sampler
  o.sample_shuffle = ShuffleMode::kSeed;
  auto s = (*f)(o);
  REQUIRE(s.ok());
  const std::vector<uint64_t> files(4, 8);
  CHECK(PlanOf(**s, files) != FileMajor(files));
  CHECK(reg.samplers.Get("bogus").status().code() == StatusCode::kNotFound);
  CHECK(MakeSampler(SamplerOptions{"bogus"}).status().message().find("'bogus'") !=
        std::string::npos);
  CHECK_FALSE(RegisterBuiltinSamplers(&reg.samplers).ok());  // names already taken
}

// Sharding::kShard (WebDataset's split_by_node): whole files dealt round-robin over the ranks
// in the epoch's file order, each file's samples in order; with the window after the reads.
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
  CHECK(WholeFiles(PlanOf(*Make(o), kFiles, 0, 0, 3), kFiles) == std::vector<uint32_t>{0, 3, 6});
  CHECK(WholeFiles(PlanOf(*Make(o), kFiles, 0, 1, 3), kFiles) == std::vector<uint32_t>{1, 4});
  CHECK(WholeFiles(PlanOf(*Make(o), kFiles, 0, 2, 3), kFiles) == std::vector<uint32_t>{2, 5});
  CHECK(PlanOf(*Make(o), kFiles, 0, 1, 3).size() == 6);
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
    auto s = Make(o);
    for (int world = 1; world <= 8; ++world) {
      for (uint64_t epoch : {0, 1, 5}) {
        INFO(name << " world " << world << " epoch " << epoch);
        std::map<std::pair<uint32_t, uint64_t>, int> seen;
        std::set<uint32_t> shards;
        for (int r = 0; r < world; ++r) {
          const Plan p = PlanOf(*Make(o), kFiles, epoch, r, world);
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
  const auto e0 = WholeFiles(PlanOf(*Make(o), kFiles, 0, 0, 1), kFiles);
  const auto e1 = WholeFiles(PlanOf(*Make(o), kFiles, 1, 0, 1), kFiles);
  CHECK(e0 != e1);
  CHECK(e0 == WholeFiles(PlanOf(*Make(o), kFiles, 0, 0, 1), kFiles));
  o.seed_change_epoch = false;
  CHECK(WholeFiles(PlanOf(*Make(o), kFiles, 1, 0, 1), kFiles) == e0);
}

}  // namespace
}  // namespace dlio
