// The paper's and DLIO's metrics: accelerator utilization (AU), throughput and I/O bandwidth.
// Pure functions over per-step records, so they can be checked on hand-computed cases.
#pragma once

#include <cstdint>
#include <vector>

#include "dlio/units.h"  // kMiB, kMB (its users got them here)

namespace dlio {

// One training step on one rank: its load, compute and barrier phases as docs/metrics.md ("Per
// step") times them. Idle steps (no batch on this rank) are not recorded.
struct StepRecord {
  int64_t load_ns = 0;     // time to obtain the batch (waiting on the pipeline)
  int64_t compute_ns = 0;  // time spent in the compute emulator
  int64_t barrier_ns = 0;  // time in the per-step barrier (counts as neither)
  uint64_t samples = 0;    // samples in the batch
  uint64_t bytes = 0;      // bytes of those samples as read from storage
};

// Metrics of one block (an epoch, or the steps between two checkpoints) on one rank.
struct BlockMetrics {
  uint64_t steps = 0;          // steps in the block
  uint64_t steps_counted = 0;  // steps after the excluded start steps
  double duration_s = 0;       // block wall time minus the excluded steps' load+compute
  double compute_s = 0;        // sum of compute over counted steps
  double load_s = 0;           // sum of load over counted steps
  double au_percent = 0;       // 100 * compute_s / duration_s
  double samples_per_s = 0;    // samples of counted steps / duration_s
  double bytes_per_s = 0;      // bytes of counted steps / duration_s
  uint64_t samples = 0;        // samples of counted steps
  uint64_t bytes = 0;          // bytes of counted steps
};

// AU% = 100 * sum(compute[S:]) / (T_block - sum(load[:S] + compute[:S])), with S =
// min(excluded_start_steps, steps) and T_block = block_ns (the block's measured time, checkpoints
// excluded; docs/metrics.md, "Per block").
// Throughput and bandwidth use the same denominator and the samples/bytes actually delivered
// (no hard-coded batch arithmetic). A block with no counted steps or a non-positive denominator
// yields zeros.
BlockMetrics ComputeBlockMetrics(const std::vector<StepRecord>& steps, int64_t block_ns,
                                 uint64_t excluded_start_steps);

// Units: DLIO reports "MB/s" computed with 2^20. We report both, named honestly.
// Mean and population standard deviation of a list (0, 0 for an empty list).
struct MeanStdev {
  double mean = 0;
  double stdev = 0;
};
MeanStdev ComputeMeanStdev(const std::vector<double>& values);

}  // namespace dlio
