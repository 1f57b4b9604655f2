#include "dlio/metrics.h"

#include <algorithm>
#include <cmath>

namespace dlio {

BlockMetrics ComputeBlockMetrics(const std::vector<StepRecord>& steps, int64_t block_ns,
                                 uint64_t excluded_start_steps) {
  BlockMetrics m;
  m.steps = steps.size();
  const size_t skip = std::min<size_t>(excluded_start_steps, steps.size());
  int64_t excluded_ns = 0;
  for (size_t i = 0; i < skip; ++i) excluded_ns += steps[i].load_ns + steps[i].compute_ns;
  int64_t compute_ns = 0, load_ns = 0;
  for (size_t i = skip; i < steps.size(); ++i) {
    compute_ns += steps[i].compute_ns;
    load_ns += steps[i].load_ns;
    m.samples += steps[i].samples;
    m.bytes += steps[i].bytes;
  }
  m.steps_counted = steps.size() - skip;
  const int64_t denom_ns = block_ns - excluded_ns;
  m.compute_s = compute_ns * 1e-9;
  m.load_s = load_ns * 1e-9;
  if (m.steps_counted == 0 || denom_ns <= 0) {
    m.samples = 0;
    m.bytes = 0;
    return m;
  }
  m.duration_s = denom_ns * 1e-9;
  m.au_percent = 100.0 * static_cast<double>(compute_ns) / static_cast<double>(denom_ns);
  m.samples_per_s = static_cast<double>(m.samples) / m.duration_s;
  m.bytes_per_s = static_cast<double>(m.bytes) / m.duration_s;
  return m;
}

MeanStdev ComputeMeanStdev(const std::vector<double>& values) {
  MeanStdev r;
  if (values.empty()) return r;
  double sum = 0;
  for (double v : values) sum += v;
  r.mean = sum / static_cast<double>(values.size());
  double sq = 0;
  for (double v : values) sq += (v - r.mean) * (v - r.mean);
  r.stdev = std::sqrt(sq / static_cast<double>(values.size()));
  return r;
}

}  // namespace dlio
