#include "runner/aggregate.h"

#include <algorithm>
#include <vector>

#include "dlio/metrics.h"

namespace dlio::runner_internal {
namespace {

// Every rank takes part in each checkpoint operation, so the counts agree across ranks.
Status AggregateCheckpointOps(Comm* comm, const std::vector<CheckpointResult>& ops, bool load,
                              std::vector<CheckpointOpSummary>* out) {
  out->clear();
  if (ops.empty()) return Status::OK();
  std::vector<double> seconds, bytes;
  for (const auto& op : ops) {
    seconds.push_back((load ? op.read_ns : op.write_ns) * 1e-9);
    bytes.push_back(static_cast<double>(load ? op.bytes_read : op.bytes_written));
  }
  DLIO_RETURN_NOT_OK(comm->AllReduceMax(&seconds));
  DLIO_RETURN_NOT_OK(comm->AllReduceSum(&bytes));
  for (size_t i = 0; i < ops.size(); ++i) {
    out->push_back({static_cast<uint64_t>(bytes[i]), seconds[i]});
  }
  return Status::OK();
}

}  // namespace

Status Aggregate(const WorkloadConfig& c, Comm* comm, RunReport* report) {
  RunReport& r = *report;
  std::vector<double> au, tp, io;
  for (const auto& e : r.epochs) {
    au.push_back(e.au_percent_mean);
    tp.push_back(e.samples_per_s_sum);
    io.push_back(e.bytes_per_s_sum);
  }
  MeanStdev m = ComputeMeanStdev(au);
  r.au_mean_percent = m.mean;
  r.au_stdev_percent = m.stdev;
  m = ComputeMeanStdev(tp);
  r.throughput_mean_samples_per_s = m.mean;
  r.throughput_stdev_samples_per_s = m.stdev;
  m = ComputeMeanStdev(io);
  r.io_mean_bytes_per_s = m.mean;
  r.io_stdev_bytes_per_s = m.stdev;
  r.au_met = !r.epochs.empty() && r.au_mean_percent >= 100.0 * c.metric.au;
  if (!r.epochs.empty()) {
    r.first_epoch_au_percent = au[0];
    r.first_epoch_samples_per_s = tp[0];
    r.first_epoch_bytes_per_s = io[0];
    r.steady_au_mean_percent = ComputeMeanStdev({au.begin() + 1, au.end()}).mean;
    r.steady_samples_per_s_mean = ComputeMeanStdev({tp.begin() + 1, tp.end()}).mean;
    r.steady_bytes_per_s_mean = ComputeMeanStdev({io.begin() + 1, io.end()}).mean;
  }
  std::vector<double> prepare_s{r.buffer_prepare_seconds};
  std::vector<double> prepared{static_cast<double>(r.buffer_prepared_bytes)};
  DLIO_RETURN_NOT_OK(comm->AllReduceMax(&prepare_s));
  DLIO_RETURN_NOT_OK(comm->AllReduceSum(&prepared));
  r.buffer_prepare_seconds = prepare_s[0];
  r.buffer_prepared_bytes = static_cast<uint64_t>(prepared[0]);

  DLIO_RETURN_NOT_OK(
      AggregateCheckpointOps(comm, r.checkpoints, /*load=*/false, &r.checkpoint_saves_all));
  DLIO_RETURN_NOT_OK(
      AggregateCheckpointOps(comm, r.checkpoint_loads, /*load=*/true, &r.checkpoint_loads_all));
  double max_s = 0;
  uint64_t bytes = 0;
  for (const auto& op : r.checkpoint_saves_all) {
    max_s = std::max(max_s, op.seconds);
    bytes += op.bytes;
  }
  const size_t saves = r.checkpoint_saves_all.size();
  r.checkpoint_max_duration_s = max_s;
  r.checkpoint_bytes_total = saves == 0 ? 0 : bytes / saves;
  return Status::OK();
}

}  // namespace dlio::runner_internal
