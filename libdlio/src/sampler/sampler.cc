#include "dlio/sampler.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <new>
#include <numeric>
#include <stdexcept>

#include "dlio/distribution.h"
#include "sampler/random.h"

namespace dlio {
namespace {

using sampler_internal::Shuffle;
using sampler_internal::WindowShuffle;

// Domain tags, so the file-order and the sample-order streams never share a seed.
constexpr uint64_t kFileOrderTag = 0x66696c65;    // "file"
constexpr uint64_t kSampleOrderTag = 0x73616d70;  // "samp"

std::string Lower(const std::string& s) {
  std::string out = s;
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

enum class Kind { kSequential, kShuffle, kShuffleBuffer };

// tf.data's interleave(cycle_length = k, block_length = block) over the runs of consecutive
// samples of one file in `list`; a run that ends inside a block hands the rest of the block to
// the next run, which takes its place (a DataLoader worker's batch spans its two shards).
void Interleave(std::vector<SampleRef>* list, uint64_t k, uint64_t block) {
  struct Run {
    size_t next, end;
  };
  std::vector<Run> runs;
  for (size_t i = 0; i < list->size();) {
    size_t j = i + 1;
    while (j < list->size() && (*list)[j].file == (*list)[i].file) ++j;
    runs.push_back({i, j});
    i = j;
  }
  if (runs.size() < 2) return;
  std::vector<SampleRef> out;
  out.reserve(list->size());
  std::vector<Run> cycle;
  size_t pending = 0;
  while (cycle.size() < k && pending < runs.size()) cycle.push_back(runs[pending++]);
  while (!cycle.empty()) {
    for (size_t slot = 0; slot < cycle.size();) {
      bool erased = false;
      for (uint64_t b = 0; b < std::max<uint64_t>(block, 1) && !erased; ++b) {
        Run& r = cycle[slot];
        out.push_back((*list)[r.next++]);
        if (r.next < r.end) continue;
        if (pending < runs.size()) {
          r = runs[pending++];  // the next file takes the exhausted one's place
        } else {
          cycle.erase(cycle.begin() + static_cast<std::ptrdiff_t>(slot));
          erased = true;
        }
      }
      if (!erased) ++slot;
    }
  }
  list->swap(out);
}

class ShardedSampler final : public Sampler {
 public:
  ShardedSampler(Kind kind, const SamplerOptions& options) : kind_(kind), options_(options) {}

  Status Plan(const PlanRequest& request, std::vector<SampleRef>* out) const override {
    // The library never throws: a plan too large for memory is a config problem to report.
    try {
      return PlanOrThrow(request, out);
    } catch (const std::bad_alloc&) {
    } catch (const std::length_error&) {
    }
    out->clear();
    out->shrink_to_fit();
    return Status::ResourceExhausted(
        "sampler: the plan of rank ", request.rank,
        " does not fit in memory (dataset.num_files_* x dataset.num_samples_per_file per rank)");
  }

 private:
  Status PlanOrThrow(const PlanRequest& request, std::vector<SampleRef>* out) const {
    DLIO_RETURN_NOT_OK(CheckRequest(request));
    const std::vector<uint64_t>& per_file = *request.samples_per_file;
    out->clear();
    const uint64_t epoch = options_.seed_change_epoch ? request.epoch : 0;
    const auto rank = static_cast<uint64_t>(request.rank);
    const auto world = static_cast<uint64_t>(request.world);
    // 1. Global file order. One allocation per epoch, not per sample.
    const std::vector<uint32_t> order = FileOrder(per_file.size(), epoch);
    // 2-3. Walk the global sample list file by file, keeping this rank's shard.
    uint64_t total = 0;
    for (uint64_t n : per_file) {
      if (n > UINT64_MAX - total) {
        return Status::InvalidArgument("sampler: more than 2^64 samples in all");
      }
      total += n;
    }
    KeepShard(order, per_file, total, rank, world, out);
    // 3b. Interleave.
    if (options_.interleave > 1) Interleave(out, options_.interleave, options_.interleave_block);
    // 4. Rank-local reordering.
    if (kind_ != Kind::kSequential) ReorderLocally(epoch, rank, out);
    // 5. Fraction.
    if (options_.fraction < 1.0 && !out->empty()) {
      const auto keep =
          static_cast<uint64_t>(std::ceil(options_.fraction * static_cast<double>(out->size())));
      out->resize(std::max<uint64_t>(1, std::min<uint64_t>(keep, out->size())));
    }
    return Status::OK();
  }

  static Status CheckRequest(const PlanRequest& request) {
    if (request.samples_per_file == nullptr) {
      return Status::InvalidArgument("sampler: PlanRequest.samples_per_file is null");
    }
    if (request.world < 1 || request.rank < 0 || request.rank >= request.world) {
      return Status::InvalidArgument("sampler: rank ", request.rank, " is outside a world of ",
                                     request.world);
    }
    const size_t files = request.samples_per_file->size();
    if (files > uint64_t{std::numeric_limits<uint32_t>::max()} + 1) {
      return Status::InvalidArgument("sampler: ", files,
                                     " files exceed the 2^32 a SampleRef can address");
    }
    return Status::OK();
  }

  // The files in order, shuffled per epoch unless sequential or dataset.file_shuffle is off.
  std::vector<uint32_t> FileOrder(size_t files, uint64_t epoch) const {
    std::vector<uint32_t> order(files);
    std::iota(order.begin(), order.end(), uint32_t{0});
    if (kind_ != Kind::kSequential && options_.file_shuffle != ShuffleMode::kOff) {
      const uint64_t entropy =
          options_.file_shuffle == ShuffleMode::kRandom ? options_.random_seed : 0;
      Shuffle(&order, MixSeed(options_.seed, epoch, kFileOrderTag, entropy));
    }
    return order;
  }

  // This rank's part of the `total` samples of the files in `order`: a contiguous block, whole
  // files round-robin (shard), every sample (none), or samples round-robin.
  void KeepShard(const std::vector<uint32_t>& order, const std::vector<uint64_t>& per_file,
                 uint64_t total, uint64_t rank, uint64_t world, std::vector<SampleRef>* out) const {
    const uint64_t base = total / world;
    const uint64_t extra = total % world;
    if (options_.sharding != Sharding::kNone) out->reserve(base + (rank < extra ? 1 : 0));
    uint64_t global = 0;  // position of the current file's first sample in the global list
    if (options_.sharding == Sharding::kBlock) {
      const uint64_t begin = rank * base + std::min(rank, extra);
      const uint64_t end = begin + base + (rank < extra ? 1 : 0);
      for (uint32_t f : order) {
        if (global >= end) break;
        const uint64_t n = per_file[f];
        const uint64_t lo = std::max(begin, global);
        const uint64_t hi = std::min(end, global + n);
        for (uint64_t p = lo; p < hi; ++p) out->push_back(SampleRef{f, p - global});
        global += n;
      }
    } else if (options_.sharding == Sharding::kShard) {
      for (size_t pos = rank; pos < order.size(); pos += world) {
        for (uint64_t i = 0; i < per_file[order[pos]]; ++i)
          out->push_back(SampleRef{order[pos], i});
      }
    } else if (options_.sharding == Sharding::kNone) {
      out->reserve(total);
      for (uint32_t f : order) {
        for (uint64_t i = 0; i < per_file[f]; ++i) out->push_back(SampleRef{f, i});
      }
    } else {
      for (uint32_t f : order) {
        const uint64_t n = per_file[f];
        // First position >= global that belongs to this rank.
        uint64_t p = global + (rank + world - global % world) % world;
        for (; p < global + n; p += world) out->push_back(SampleRef{f, p - global});
        global += n;
      }
    }
  }

  // The rank's own shuffle: a window (shuffle buffer, unless it shuffles after reading) or the
  // whole list (dataset.sample_shuffle).
  void ReorderLocally(uint64_t epoch, uint64_t rank, std::vector<SampleRef>* out) const {
    const uint64_t entropy =
        options_.sample_shuffle == ShuffleMode::kRandom ? options_.random_seed : 0;
    const uint64_t sample_seed =
        MixSeed(MixSeed(options_.seed, epoch, rank), kSampleOrderTag, entropy);
    if (kind_ == Kind::kShuffleBuffer) {
      if (!options_.shuffle_after_read) WindowShuffle(out, options_.shuffle_size, sample_seed);
    } else if (options_.sample_shuffle != ShuffleMode::kOff) {
      Shuffle(out, sample_seed);
    }
  }

  Kind kind_;
  SamplerOptions options_;
};

}  // namespace

Result<ShuffleMode> ParseShuffleMode(const std::string& value, const std::string& key) {
  const std::string v = Lower(value);
  if (auto mode = EnumFromName<ShuffleMode>(v)) return *mode;
  if (v == "false" || v == "no" || v == "0" || v == "none") return ShuffleMode::kOff;
  if (v == "true" || v == "on" || v == "yes" || v == "1") return ShuffleMode::kSeed;
  return Status::InvalidArgument(key + ": unknown shuffle mode '" + value + "' (accepted: " +
                                 EnumNameList<ShuffleMode>() + "; true/on = seed, false = off)");
}

Result<Sharding> ParseSharding(const std::string& value, const std::string& key) {
  const std::string v = Lower(value);
  if (auto sharding = EnumFromName<Sharding>(v)) return *sharding;
  if (v == "round-robin") return Sharding::kRoundRobin;
  if (v == "replicated") return Sharding::kNone;
  return Status::InvalidArgument(key + ": unknown sharding '" + value +
                                 "' (accepted: " + EnumNameList<Sharding>() + ")");
}

const char* ShuffleModeName(ShuffleMode mode) { return EnumName(mode).data(); }

const char* ShardingName(Sharding sharding) { return EnumName(sharding).data(); }

namespace {

// The samplers MakeSampler builds, by name: auto picks from the shuffle modes (and the window,
// SamplerOptions::window_shuffle).
struct SamplerKind {
  const char* name;
  Kind (*kind)(const SamplerOptions& options);
};
constexpr SamplerKind kSamplerKinds[] = {
    {"auto",
     [](const SamplerOptions& o) {
       const bool any =
           o.file_shuffle != ShuffleMode::kOff || o.sample_shuffle != ShuffleMode::kOff;
       const bool window = o.window_shuffle && o.sample_shuffle != ShuffleMode::kOff;
       return !any ? Kind::kSequential : window ? Kind::kShuffleBuffer : Kind::kShuffle;
     }},
    {"sequential", [](const SamplerOptions&) { return Kind::kSequential; }},
    {"shuffle", [](const SamplerOptions&) { return Kind::kShuffle; }},
    {"shuffle_buffer", [](const SamplerOptions&) { return Kind::kShuffleBuffer; }},
};

}  // namespace

Result<std::unique_ptr<Sampler>> MakeSampler(const SamplerOptions& options) {
  if (!(options.fraction > 0 && options.fraction <= 1)) {
    return Status::InvalidArgument("reader.read_fraction must be in (0, 1], got ",
                                   options.fraction);
  }
  std::string known;
  for (const SamplerKind& entry : kSamplerKinds) {
    known += std::string(known.empty() ? "" : ", ") + entry.name;
    if (options.name != entry.name) continue;
    const Kind kind = entry.kind(options);
    if (kind == Kind::kShuffleBuffer && options.shuffle_size < 1) {
      return Status::InvalidArgument(
          "reader.shuffle_size must be >= 1 for the shuffle_buffer sampler, got 0");
    }
    return std::unique_ptr<Sampler>(new ShardedSampler(kind, options));
  }
  return Status::NotFound("unknown sampler '" + options.name + "' (known: " + known + ")");
}

}  // namespace dlio
