// Sampler: which samples a rank reads in an epoch, and in what order.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dlio/data_source.h"
#include "dlio/registry.h"
#include "dlio/status.h"

namespace dlio {

enum class ShuffleMode { kOff, kSeed, kRandom };  // DLIO: off, seed (reproducible), random
enum class Sharding { kBlock, kRoundRobin };

struct SamplerOptions {
  std::string name = "auto";  // sequential, shuffle, shuffle_buffer; auto picks from the modes
  ShuffleMode file_shuffle = ShuffleMode::kOff;
  ShuffleMode sample_shuffle = ShuffleMode::kOff;
  uint64_t shuffle_size = 1024;  // shuffle_buffer: window of samples
  Sharding sharding = Sharding::kBlock;
  uint64_t seed = 123;
  bool seed_change_epoch = true;  // false: the same order every epoch
  uint64_t random_seed = 0;       // entropy used by ShuffleMode::kRandom (drawn once per run)
};

struct PlanRequest {
  uint64_t epoch = 0;  // 0-based
  int rank = 0;
  int world = 1;
  const std::vector<uint64_t>* samples_per_file = nullptr;
};

// Thread safety: Plan is const and safe for concurrent use.
class Sampler {
 public:
  virtual ~Sampler() = default;
  // Fills `out` with this rank's samples for the epoch, in read order. Over all ranks of one epoch
  // the plans cover every sample exactly once (ranks may differ by at most one sample... see the
  // sharding docs). Depends only on (options, epoch, rank, world, samples_per_file).
  virtual Status Plan(const PlanRequest& request, std::vector<SampleRef>* out) const = 0;
};

using SamplerFactory = std::function<Result<std::unique_ptr<Sampler>>(const SamplerOptions&)>;

Result<ShuffleMode> ParseShuffleMode(const std::string& value, const std::string& key);
Result<Sharding> ParseSharding(const std::string& value, const std::string& key);

}  // namespace dlio
