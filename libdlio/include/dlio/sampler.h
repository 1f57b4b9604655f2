// Sampler: which samples a rank reads in an epoch, and in what order.
//
// How a plan is built, for epoch e, rank r of `world` (every step is O(files + samples of r)):
//  1. Global file order: files in index order; when file_shuffle != off, shuffled with a seed
//     mixed from (seed, e if seed_change_epoch else 0[, random_seed when kRandom]).
//  2. Global sample list: the samples of each file in that order, sample indices ascending
//     within a file (so a file's samples stay together and in order).
//  3. Sharding of that list over the world (total T, base = T / world, extra = T % world):
//     kBlock       rank r gets one contiguous block; the first `extra` ranks get base + 1
//                  samples, the others base. When files hold equal counts and divide evenly among
//                  ranks, every rank reads whole files (DLIO's file-per-process pattern).
//     kRoundRobin  rank r gets the positions r, r + world, r + 2 world, ...
//     kShard       whole files, dealt round-robin in the file order: rank r gets the files at
//                  positions r, r + world, ... with all their samples (WebDataset's
//                  split_by_node, urls[rank::world]); ranks' counts differ by up to a file.
//     kNone        every rank gets the whole list (replicated: CANDLE's ranks each read the
//                  whole file), so ranks read the same samples.
//  3b. Interleave: when interleave = k > 1, the rank's list is re-ordered as tf.data's
//     interleave(cycle_length=k, block_length=interleave_block) emits it: runs of one file's
//     consecutive samples are consumed k at a time, interleave_block samples (1 by default) from
//     each in turn; an exhausted run's place, and the rest of its block, go to the next run. Every
//     file is still read in order, k files at a time (Imagenet's 2 pipeline threads each streaming
//     its own file).
//  4. Rank-local reordering:
//     "shuffle"         when sample_shuffle != off, a full shuffle of the rank's list with a seed
//                       mixed from (seed, e if seed_change_epoch else 0, r[, random_seed]).
//     "shuffle_buffer"  always streams the rank's list through a window of shuffle_size samples,
//                       emitting a uniformly chosen element of the window each time (tf.data's
//                       shuffle(buffer_size)); shuffle_size 1 keeps the order. The seed is mixed
//                       as for "shuffle" (random_seed is mixed in when sample_shuffle is kRandom).
//                       With shuffle_after_read the window reorders samples after they are read,
//                       as tf.data's shuffle() does after TFRecordDataset: the plan (the order of
//                       the reads) keeps the stream order of steps 1-3b.
//     "sequential"      ignores both shuffle modes: file order, no reordering.
//     "auto"            "shuffle" when file_shuffle or sample_shuffle is not off, else sequential.
//  5. Fraction: when fraction < 1, the rank keeps the first ceil(fraction x n) samples of its
//     list (at least 1 when n > 0): with a sample shuffle a seeded random subset, different every
//     epoch (DFFN's ranks that each read a third of the data).
// Since steps 1-2 do not depend on the rank and step 4 only permutes a rank's own samples, the
// plans of all ranks of one epoch cover every sample exactly once (with kBlock or kRoundRobin and
// fraction 1; kNone gives every rank every sample, fraction < 1 leaves samples out). With
// seed_change_epoch the order really changes every epoch (unlike Python DLIO, whose seeded
// shuffles repeat); without it every epoch repeats epoch 0's order.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dlio/config_enums.h"
#include "dlio/data_source.h"
#include "dlio/registry.h"
#include "dlio/status.h"

namespace dlio {

// ShuffleMode and Sharding (with their config spellings) are in dlio/config_enums.h.

struct SamplerOptions {
  std::string name = "auto";  // sequential, shuffle, shuffle_buffer; auto picks from the modes
  ShuffleMode file_shuffle = ShuffleMode::kOff;
  ShuffleMode sample_shuffle = ShuffleMode::kOff;
  uint64_t shuffle_size = 1024;  // shuffle_buffer: window of samples (>= 1)
  Sharding sharding = Sharding::kBlock;
  uint64_t seed = 123;
  bool seed_change_epoch = true;  // false: the same order every epoch
  uint64_t random_seed = 0;       // entropy used by ShuffleMode::kRandom (drawn once per run)
  double fraction = 1.0;          // (0, 1]: share of its list a rank keeps (step 5)
  uint64_t interleave = 0;        // files read at a time, alternating (step 3b); 0 or 1 = off
  uint64_t interleave_block = 1;  // consecutive samples of a file per turn (step 3b)
  // shuffle_buffer: the window applies after the reads (step 4), so the plan keeps each file's
  // stream order (reader.io_model tf.data; AdaptSamplerToIoModel in dlio/loop.h sets it).
  bool shuffle_after_read = false;
  // auto with sample_shuffle on: shuffle each rank's stream through the shuffle_size window
  // (shuffle_buffer) instead of the whole epoch, as DLIO's TensorFlow loader (tf.data's
  // shuffle) and the stream-order I/O models do (SamplerOptionsFor, AdaptSamplerToIoModel).
  bool window_shuffle = false;
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
  // `out` is cleared and reused: once its capacity suffices, planning does not reallocate it.
  // InvalidArgument when samples_per_file is null, world < 1, rank outside [0, world) or there are
  // more than 2^32 files.
  virtual Status Plan(const PlanRequest& request, std::vector<SampleRef>* out) const = 0;
};

using SamplerFactory = std::function<Result<std::unique_ptr<Sampler>>(const SamplerOptions&)>;
// The samplers by name (Registries::samplers).
using SamplerRegistry = Registry<SamplerFactory>;
// Registers the built-in samplers; called by RegisterBuiltins.
Status RegisterBuiltinSamplers(SamplerRegistry* samplers);

// Case-insensitive. off | seed | random; also DLIO's booleans: true/on/yes/1 = seed,
// false/no/0/none = off. InvalidArgument naming `key` and the accepted values otherwise.
Result<ShuffleMode> ParseShuffleMode(const std::string& value, const std::string& key);
// Case-insensitive: block | round_robin (also round-robin) | none (also replicated).
// InvalidArgument naming `key` otherwise.
Result<Sharding> ParseSharding(const std::string& value, const std::string& key);
const char* ShuffleModeName(ShuffleMode mode);  // "off", "seed", "random"
const char* ShardingName(Sharding sharding);    // "block", "round_robin", "none"

// Builds the built-in sampler named options.name (auto, sequential, shuffle, shuffle_buffer)
// without a registry; NotFound naming the known names, InvalidArgument for shuffle_size 0 or a
// fraction outside (0, 1].
Result<std::unique_ptr<Sampler>> MakeSampler(const SamplerOptions& options);

}  // namespace dlio
