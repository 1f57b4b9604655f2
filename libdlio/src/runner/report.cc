#include "runner/report.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "core/host_memory.h"
#include "dlio/metrics.h"
#include "dlio/version.h"
#include "runner/epoch_stats.h"
#include "runner/summary_hosts.h"

namespace dlio {
namespace {

using json = nlohmann::json;

std::string IsoTime(int64_t wall_us) { return FormatWallTime(wall_us, /*utc=*/true) + "Z"; }

std::string HostName() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// What each rank sends to rank 0 for summary.json's per-rank section.
json RankDigest(const RunReport& r) {
  json au = json::array(), tp = json::array(), io = json::array(), steps = json::array(),
       samples = json::array();
  for (const auto& e : r.epochs) {
    au.push_back(e.metrics.au_percent);
    tp.push_back(e.metrics.samples_per_s);
    io.push_back(e.metrics.bytes_per_s / kMB);
    uint64_t n = 0;
    for (const auto& step : e.steps) n += step.samples;
    steps.push_back(e.steps.size());
    samples.push_back(n);
  }
  json ck = json::array();
  for (const auto& cp : r.checkpoints) ck.push_back(cp.write_ns * 1e-9);
  json digest = {{"rank", r.rank},
                 {"hostname", HostName()},
                 {"au_percentage", au},
                 {"throughput_samples_per_second", tp},
                 {"io_MB_per_second", io},
                 {"steps", steps},
                 {"samples", samples},
                 {"checkpoint_seconds", ck},
                 {"read_bytes", r.io.read_bytes},
                 {"read_ops", r.io.read_ops},
                 {"write_bytes", r.io.write_bytes},
                 {"write_ops", r.io.write_ops},
                 {"files_generated", r.generate.files_written},
                 {"files_skipped", r.generate.files_skipped},
                 {"bytes_generated", r.generate.bytes_written},
                 {"generate_seconds", r.generate.duration_ns * 1e-9}};
  AddHostDigest(&digest);
  return digest;
}

constexpr double kGB = 1e9;

// DLIO's checkpoint metrics for saves or loads: per checkpoint the slowest rank's duration and
// size / that duration, then mean and stdev over checkpoints. DLIO's GB is 2^30 bytes (= GiB);
// the SI_ figures are 10^9 (GB) and 10^6 (MB) bytes.
void AddCheckpointOps(const std::string& prefix, const std::vector<CheckpointOpSummary>& ops,
                      json* metric) {
  std::vector<double> seconds, rate_gb;
  json bytes = json::array();
  for (const auto& op : ops) {
    seconds.push_back(op.seconds);
    rate_gb.push_back(op.seconds > 0 ? op.bytes / kGB / op.seconds : 0.0);
    bytes.push_back(op.bytes);
  }
  const MeanStdev d = ComputeMeanStdev(seconds), g = ComputeMeanStdev(rate_gb);
  (*metric)[prefix + "_bytes"] = bytes;
  (*metric)[prefix + "_duration_seconds"] = seconds;
  (*metric)[prefix + "_duration_mean_seconds"] = d.mean;
  (*metric)[prefix + "_duration_stdev_seconds"] = d.stdev;
  (*metric)[prefix + "_io_SI_GB_per_second"] = rate_gb;
  (*metric)[prefix + "_io_mean_SI_GB_per_second"] = g.mean;
  (*metric)[prefix + "_io_stdev_SI_GB_per_second"] = g.stdev;
  (*metric)[prefix + "_io_mean_SI_MB_per_second"] = g.mean * kGB / kMB;
  (*metric)[prefix + "_io_mean_GB_per_second"] = g.mean * kGB / kGiB;
  (*metric)[prefix + "_io_stdev_GB_per_second"] = g.stdev * kGB / kGiB;
  (*metric)[prefix + "_io_mean_GiB_per_second"] = g.mean * kGB / kGiB;
}

// DLIO writes the save_checkpoint_* means and stdevs whenever checkpointing is on (numpy's mean of
// no saves: NaN) and checkpoint_size_GB (0.0 without a checkpoint). nlohmann writes NaN as null:
// standard JSON, where Python's json writes the token NaN (docs/metrics.md).
void AddUnsavedCheckpointMetrics(const WorkloadConfig& c, const RunReport& r, json* metric) {
  if (!c.workflow.checkpoint || !r.checkpoint_saves_all.empty()) return;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const char* k :
       {"save_checkpoint_io_mean_GB_per_second", "save_checkpoint_io_stdev_GB_per_second",
        "save_checkpoint_duration_mean_seconds", "save_checkpoint_duration_stdev_seconds"}) {
    (*metric)[k] = nan;
  }
  if (!metric->contains("checkpoint_size_GB")) (*metric)["checkpoint_size_GB"] = 0.0;
}

json StorageRules(const StorageRulesCheck& check) {
  return {{"dataset_bytes", check.dataset_bytes},
          {"client_memory_bytes", check.client_memory_bytes},
          {"num_hosts", check.num_hosts},
          {"dataset_to_client_memory_ratio",
           check.client_memory_bytes > 0
               ? static_cast<double>(check.dataset_bytes) / check.client_memory_bytes
               : 0.0},
          {"dataset_ge_5x_client_memory", check.dataset_ge_5x_memory},
          {"mlperf_rules", check.mlperf_rules},
          {"steps_per_epoch", check.steps_per_epoch},
          {"steps_per_epoch_ge_500", check.steps_ge_500}};
}

// Epoch 1 apart from the steady state (epochs 2..N), and the untimed buffer preparation before
// epoch 1 (docs/metrics.md, "First epoch and steady state").
void AddFirstEpochMetrics(const RunReport& r, json* metric) {
  if (r.epochs.empty()) return;
  (*metric)["train_first_epoch_au_percentage"] = r.first_epoch_au_percent;
  (*metric)["train_first_epoch_throughput_samples_per_second"] = r.first_epoch_samples_per_s;
  (*metric)["train_first_epoch_io_SI_MB_per_second"] = r.first_epoch_bytes_per_s / kMB;
  if (r.epochs.size() >= 2) {
    (*metric)["train_steady_au_mean_percentage"] = r.steady_au_mean_percent;
    (*metric)["train_steady_throughput_mean_samples_per_second"] = r.steady_samples_per_s_mean;
    (*metric)["train_steady_io_mean_SI_MB_per_second"] = r.steady_bytes_per_s_mean / kMB;
    (*metric)["train_first_epoch_to_steady_throughput_ratio"] =
        r.steady_samples_per_s_mean > 0 ? r.first_epoch_samples_per_s / r.steady_samples_per_s_mean
                                        : 0.0;
  }
  (*metric)["buffer_prepare_seconds"] = r.buffer_prepare_seconds;
  (*metric)["buffer_prepared_bytes"] = r.buffer_prepared_bytes;
}

// Per accelerator (= rank), as MLPerf Storage counts them: per epoch the lowest accelerator's AU
// and the throughput per accelerator (the aggregate over accelerators is train_throughput_*).
void AddPerAcceleratorMetrics(const RunReport& r, const std::vector<json>& ranks, json* metric) {
  json au_min = json::array(), tp_each = json::array();
  for (size_t e = 0; e < r.epochs.size(); ++e) {
    double lowest = r.epochs[e].metrics.au_percent;
    for (const auto& j : ranks) {
      const json& au = j.value("au_percentage", json::array());
      if (e < au.size() && au[e].is_number()) lowest = std::min(lowest, au[e].get<double>());
    }
    au_min.push_back(lowest);
    tp_each.push_back(r.epochs[e].samples_per_s_sum / std::max(1, r.world));
  }
  (*metric)["train_au_min_accelerator_percentage"] = au_min;
  (*metric)["train_throughput_per_accelerator_samples_per_second"] = tp_each;
  (*metric)["train_throughput_per_accelerator_mean_samples_per_second"] =
      r.throughput_mean_samples_per_s / std::max(1, r.world);
}

// DLIO's eval_* metrics (its MB = 2^20 bytes) over the evaluation epochs.
void AddEvalMetrics(const WorkloadConfig& c, const RunReport& r, json* metric) {
  std::vector<double> eau, etp, eio;
  for (const auto& e : r.eval_epochs) {
    eau.push_back(e.au_percent_mean);
    etp.push_back(e.samples_per_s_sum);
    eio.push_back(e.bytes_per_s_sum / kMiB);
  }
  const MeanStdev au = ComputeMeanStdev(eau), tp = ComputeMeanStdev(etp),
                  io = ComputeMeanStdev(eio);
  (*metric)["eval_au_percentage"] = eau;
  (*metric)["eval_au_mean_percentage"] = au.mean;
  (*metric)["eval_au_stdev_percentage"] = au.stdev;
  (*metric)["eval_au_meet_expectation"] = au.mean >= 100.0 * c.metric.au ? "success" : "fail";
  (*metric)["eval_throughput_samples_per_second"] = etp;
  (*metric)["eval_throughput_mean_samples_per_second"] = tp.mean;
  (*metric)["eval_throughput_stdev_samples_per_second"] = tp.stdev;
  (*metric)["eval_io_mean_MB_per_second"] = io.mean;
  (*metric)["eval_io_stdev_MB_per_second"] = io.stdev;
}

// DLIO's train_* metrics: per-epoch lists, their means and deviations, in MB, SI_MB and MiB.
void AddTrainMetrics(const WorkloadConfig& c, const RunReport& r, const std::vector<json>& ranks,
                     json* metric) {
  json au = json::array(), tp = json::array(), io_mb = json::array(), io_mib = json::array();
  for (const auto& e : r.epochs) {
    au.push_back(e.au_percent_mean);
    tp.push_back(e.samples_per_s_sum);
    io_mb.push_back(e.bytes_per_s_sum / kMB);
    io_mib.push_back(e.bytes_per_s_sum / kMiB);
  }
  json& m = *metric;
  m["train_au_percentage"] = au;
  m["train_au_mean_percentage"] = r.au_mean_percent;
  m["train_au_stdev_percentage"] = r.au_stdev_percent;
  m["train_au_meet_expectation"] = r.au_met ? "success" : "fail";
  m["train_au_expectation_percentage"] = 100.0 * c.metric.au;
  m["train_throughput_samples_per_second"] = tp;
  m["train_throughput_mean_samples_per_second"] = r.throughput_mean_samples_per_s;
  m["train_throughput_stdev_samples_per_second"] = r.throughput_stdev_samples_per_s;
  // DLIO's MB is 2^20 bytes (= MiB); the SI_ figures are 10^6 bytes.
  m["train_io_mean_MB_per_second"] = r.io_mean_bytes_per_s / kMiB;
  m["train_io_stdev_MB_per_second"] = r.io_stdev_bytes_per_s / kMiB;
  m["train_io_SI_MB_per_second"] = io_mb;
  m["train_io_mean_SI_MB_per_second"] = r.io_mean_bytes_per_s / kMB;
  m["train_io_stdev_SI_MB_per_second"] = r.io_stdev_bytes_per_s / kMB;
  m["train_io_MiB_per_second"] = io_mib;
  m["train_io_mean_MiB_per_second"] = r.io_mean_bytes_per_s / kMiB;
  m["train_io_stdev_MiB_per_second"] = r.io_stdev_bytes_per_s / kMiB;
  AddFirstEpochMetrics(r, metric);
  AddPerAcceleratorMetrics(r, ranks, metric);
}

// The checkpoint_* and load_checkpoint_* metrics (sizes from the first load when nothing saved).
void AddCheckpointMetrics(const WorkloadConfig& c, const RunReport& r, json* metric) {
  json& m = *metric;
  if (!r.checkpoint_type.empty()) m["checkpoint_type"] = r.checkpoint_type;
  if (!r.checkpoint_saves_all.empty()) {
    m["checkpoint_count"] = r.checkpoint_saves_all.size();
    m["checkpoint_size_bytes"] = r.checkpoint_bytes_total;
    m["checkpoint_size_GB"] = r.checkpoint_bytes_total / kGiB;  // DLIO's GB = 2^30 bytes
    m["checkpoint_size_SI_GB"] = r.checkpoint_bytes_total / kGB;
    m["checkpoint_size_GiB"] = r.checkpoint_bytes_total / kGiB;
    AddCheckpointOps("save_checkpoint", r.checkpoint_saves_all, metric);
  }
  if (!r.checkpoint_loads_all.empty()) {
    m["load_checkpoint_count"] = r.checkpoint_loads_all.size();
    if (r.checkpoint_saves_all.empty()) {
      m["checkpoint_size_bytes"] = r.checkpoint_loads_all[0].bytes;
      m["checkpoint_size_GB"] = r.checkpoint_loads_all[0].bytes / kGiB;
      m["checkpoint_size_SI_GB"] = r.checkpoint_loads_all[0].bytes / kGB;
      m["checkpoint_size_GiB"] = r.checkpoint_loads_all[0].bytes / kGiB;
    }
    AddCheckpointOps("load_checkpoint", r.checkpoint_loads_all, metric);
  }
  AddUnsavedCheckpointMetrics(c, r, metric);
}

json SummaryMetric(const WorkloadConfig& c, const RunReport& r, const std::vector<json>& ranks) {
  json metric;
  // DLIO writes the train_* metrics for training runs only (not checkpoint-only ones).
  if (c.workflow.train) AddTrainMetrics(c, r, ranks, &metric);
  if (!r.eval_epochs.empty()) AddEvalMetrics(c, r, &metric);
  AddCheckpointMetrics(c, r, &metric);
  return metric;
}

// The hosts and I/O totals over the ranks' files: "num_hosts" and "io".
void AddRankTotals(const std::vector<json>& ranks, json* s) {
  std::set<std::string> hosts;
  uint64_t read_bytes = 0, read_ops = 0, write_bytes = 0, write_ops = 0;
  for (const auto& j : ranks) {
    hosts.insert(j.value("hostname", std::string()));
    read_bytes += j.value("read_bytes", uint64_t{0});
    read_ops += j.value("read_ops", uint64_t{0});
    write_bytes += j.value("write_bytes", uint64_t{0});
    write_ops += j.value("write_ops", uint64_t{0});
  }
  (*s)["num_hosts"] = hosts.size();
  (*s)["io"] = {{"read_bytes", read_bytes},
                {"read_ops", read_ops},
                {"write_bytes", write_bytes},
                {"write_ops", write_ops}};
}

// Who ran: the version, workload, accelerators, processes and this host.
void AddRunIdentity(const WorkloadConfig& c, const RunReport& r, json* s) {
  (*s)["dlio_version"] = kVersion;
  (*s)["workload"] = c.name;
  // One rank per emulated accelerator: processes x train.accelerators_per_process.
  const uint64_t per_process = std::max<uint64_t>(1, c.train.accelerators_per_process);
  (*s)["num_accelerators"] = r.world;
  (*s)["accelerators_per_process"] = per_process;
  (*s)["num_processes"] = static_cast<uint64_t>(r.world) / per_process;
  (*s)["hostname"] = HostName();
  (*s)["host_memory_bytes"] = HostMemoryBytes();
  (*s)["host_cpus"] = std::thread::hardware_concurrency();
}

// What ran: the dataset's shape, the epochs and the generate phase's totals.
void AddRunShape(const WorkloadConfig& c, const RunReport& r, json* s) {
  (*s)["epochs"] = r.epochs.size();
  (*s)["format"] = c.dataset.format;
  (*s)["num_files_train"] = c.dataset.num_files_train;
  (*s)["num_files_eval"] = c.dataset.num_files_eval;
  (*s)["num_samples_per_file"] = c.dataset.num_samples_per_file;
  (*s)["record_length_bytes"] = c.dataset.record_length_bytes;
  (*s)["batch_size"] = c.reader.batch_size;
  (*s)["generate"] = {{"files_written", r.generate_all.files_written},
                      {"files_skipped", r.generate_all.files_skipped},
                      {"bytes_written", r.generate_all.bytes_written},
                      {"duration_seconds", r.generate_all.duration_ns * 1e-9}};
}

json Summary(const WorkloadConfig& c, const RunReport& r, const std::vector<json>& ranks,
             int64_t start_us, int64_t end_us) {
  json s;
  AddRunIdentity(c, r, &s);
  AddRankTotals(ranks, &s);
  s["metric"] = SummaryMetric(c, r, ranks);
  AddDlioHostKeys(c, ranks, r.world, &s);
  s["units"] = {{"MB", "2^20 bytes (DLIO's MB)"},
                {"GB", "2^30 bytes (DLIO's GB)"},
                {"MiB", "2^20 bytes"},
                {"GiB", "2^30 bytes"},
                {"SI_MB", "10^6 bytes"},
                {"SI_GB", "10^9 bytes"},
                {"time", "seconds"}};
  s["start"] = IsoTime(start_us);
  s["end"] = IsoTime(end_us);
  s["duration_seconds"] = (end_us - start_us) * 1e-6;
  AddRunShape(c, r, &s);
  if (r.storage_rules.checked) {
    s["storage_rules"] = StorageRules(r.storage_rules);
  }
  // Rank 0's storage statistics per training epoch: the tiered storage's "cache", s3's "s3".
  AddStorageStatsSummary(r.epochs, &s);
  s["ranks"] = ranks;
  s["warnings"] = r.warnings;
  return s;
}

// The first line: workload, ranks (processes x accelerator threads), dataset, what ran.
void WriteHeadline(const WorkloadConfig& c, const RunReport& r, std::ostringstream& o) {
  o << "dlio " << kVersion << ": workload '" << c.name << "' on " << r.world
    << (r.world == 1 ? " rank" : " ranks");
  if (c.train.accelerators_per_process > 1) {
    o << " (" << r.world / static_cast<int>(c.train.accelerators_per_process) << " process"
      << (r.world == static_cast<int>(c.train.accelerators_per_process) ? "" : "es") << " x "
      << c.train.accelerators_per_process << " accelerator threads)";
  }
  if (c.workflow.train || c.workflow.generate_data) {
    o << ", format " << c.dataset.format << ", " << c.dataset.num_files_train << " files x "
      << c.dataset.num_samples_per_file << " samples of "
      << HumanBytes(static_cast<double>(c.dataset.record_length_bytes));
  }
  // A generate-only run of a config that checkpoints while training built no checkpointer.
  if (!c.workflow.train && c.workflow.checkpoint && !r.checkpoint_type.empty()) {
    o << ", checkpoint only (" << r.checkpoint_type << " checkpointer)";
  } else if (!c.workflow.train && c.workflow.generate_data) {
    o << ", generate only";
  }
  o << "\n";
}

void WriteGenerateLine(const RunReport& r, std::ostringstream& o) {
  const GenerateReport& g = r.generate_all;
  const double secs = g.duration_ns * 1e-9;
  o << "  generate: " << g.files_written << " files written, " << g.files_skipped
    << " already present, " << HumanBytes(static_cast<double>(g.bytes_written)) << " in "
    << Fixed(secs, 2) << " s";
  if (secs > 0 && g.bytes_written > 0) {
    o << " (" << Fixed(g.bytes_written / kMiB / secs, 1) << " MiB/s"
      << (r.world > 1 ? " over all ranks" : "") << ")";
  }
  o << "\n";
}

// Training's AU, throughput and I/O, the first epoch against the steady state, and the untimed
// buffer preparation.
void WriteTrainLines(const WorkloadConfig& c, const RunReport& r, std::ostringstream& o) {
  o << "  train: AU " << Fixed(r.au_mean_percent, 2) << "% (target " << Fixed(100 * c.metric.au, 0)
    << "%: " << (r.au_met ? "met" : "NOT met") << "), throughput "
    << Fixed(r.throughput_mean_samples_per_s, 1) << " samples/s, I/O "
    << Fixed(r.io_mean_bytes_per_s / kMB, 1) << " MB/s (" << Fixed(r.io_mean_bytes_per_s / kMiB, 1)
    << " MiB/s)\n";
  o << "  train_au_meet_expectation: " << (r.au_met ? "success" : "fail") << "\n";
  o << "  first epoch: AU " << Fixed(r.first_epoch_au_percent, 2) << "%, "
    << Fixed(r.first_epoch_samples_per_s, 1) << " samples/s";
  if (r.epochs.size() >= 2) {
    o << "; steady state (epochs 2-" << r.epochs.size() << "): AU "
      << Fixed(r.steady_au_mean_percent, 2) << "%, " << Fixed(r.steady_samples_per_s_mean, 1)
      << " samples/s";
    if (r.steady_samples_per_s_mean > 0) {
      o << " (first/steady " << Fixed(r.first_epoch_samples_per_s / r.steady_samples_per_s_mean, 3)
        << ")";
    }
  }
  o << "\n  buffers prepared before epoch 1 (untimed): "
    << HumanBytes(static_cast<double>(r.buffer_prepared_bytes)) << " in "
    << Fixed(r.buffer_prepare_seconds, 3) << " s\n";
}

// One line per kind of checkpoint operation: count, size, the slowest rank's mean time and rate.
void WriteCheckpointOpsLine(const char* what, const std::vector<CheckpointOpSummary>& ops,
                            std::ostringstream& o) {
  if (ops.empty()) return;
  std::vector<double> seconds, rates;
  for (const auto& op : ops) {
    seconds.push_back(op.seconds);
    rates.push_back(op.seconds > 0 ? op.bytes / kGB / op.seconds : 0.0);
  }
  o << "  checkpoint " << what << ": " << ops.size() << " x "
    << HumanBytes(static_cast<double>(ops[0].bytes)) << ", slowest rank "
    << Fixed(ComputeMeanStdev(seconds).mean, 3) << " s mean, "
    << Fixed(ComputeMeanStdev(rates).mean, 3) << " GB/s mean\n";
}

std::string SummaryText(const WorkloadConfig& c, const RunReport& r) {
  std::ostringstream o;
  WriteHeadline(c, r, o);
  if (c.workflow.generate_data) WriteGenerateLine(r, o);
  for (const auto& e : r.epochs) o << "  " << FormatEpochLine("train", e) << "\n";
  for (const auto& e : r.eval_epochs) o << "  " << FormatEpochLine("eval", e) << "\n";
  if (!r.epochs.empty()) WriteTrainLines(c, r, o);
  WriteCheckpointOpsLine("saves", r.checkpoint_saves_all, o);
  WriteCheckpointOpsLine("loads", r.checkpoint_loads_all, o);
  for (const auto& w : r.warnings) o << "  warning: " << w << "\n";
  return o.str();
}

}  // namespace

std::string HumanBytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 4) {
    bytes /= 1024.0;
    ++u;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return buf;
}

std::string FormatEpochLine(const char* phase, const EpochReport& e) {
  std::ostringstream o;
  o << phase << " epoch " << e.epoch << ": " << e.metrics.steps << " steps, AU "
    << Fixed(e.au_percent_mean, 2) << "%, " << Fixed(e.samples_per_s_sum, 1) << " samples/s, "
    << Fixed(e.bytes_per_s_sum / kMB, 1) << " MB/s";
  for (const StatsBlock& block : e.storage_stats) {
    if (!block.progress.empty()) o << ", " << block.progress;
  }
  return o.str();
}

Status WriteReports(const WorkloadConfig& config, Comm* comm, int64_t start_us, int64_t end_us,
                    Storage* out, RunReport* report) {
  std::vector<std::string> gathered;
  DLIO_RETURN_NOT_OK(comm->Gather(
      RankDigest(*report).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), 0,
      &gathered));
  std::vector<json> ranks;
  for (const auto& g : gathered) {
    json j = json::parse(g, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return Status::Internal("a rank sent an unparseable digest");
    ranks.push_back(std::move(j));
  }
  // Every rank's output.json judges potential_caching against rank 0's data_size_per_host_GB, as
  // DLIO does.
  std::string per_host_gb =
      report->rank == 0 ? json(DataSizePerHostGB(config, ranks, report->world)).dump() : "";
  DLIO_RETURN_NOT_OK(comm->Broadcast(&per_host_gb, 0));
  const std::string dir = config.output.folder + "/";
  const std::string rank = std::to_string(report->rank);
  if (out != nullptr) {
    DLIO_RETURN_NOT_OK(WriteFileAtomically(
        out, dir + rank + "_per_epoch_stats.json",
        PerEpochStatsJson(*report).dump(4, ' ', false, nlohmann::json::error_handler_t::replace)));
    const RankHostInfo host = LocalRankHostInfo(std::strtod(per_host_gb.c_str(), nullptr));
    DLIO_RETURN_NOT_OK(
        WriteFileAtomically(out, dir + rank + "_output.json",
                            RankOutputJson(*report, host)
                                .dump(4, ' ', false, nlohmann::json::error_handler_t::replace)));
  }
  if (report->rank != 0) return Status::OK();
  GenerateReport& all = report->generate_all;
  all = GenerateReport();
  for (const auto& j : ranks) {
    all.files_written += j.value("files_generated", uint64_t{0});
    all.files_skipped += j.value("files_skipped", uint64_t{0});
    all.bytes_written += j.value("bytes_generated", uint64_t{0});
    all.duration_ns = std::max<int64_t>(
        all.duration_ns, static_cast<int64_t>(j.value("generate_seconds", 0.0) * 1e9));
  }
  report->summary_json = Summary(config, *report, ranks, start_us, end_us)
                             .dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  report->summary_text = SummaryText(config, *report);
  if (out != nullptr) {
    DLIO_RETURN_NOT_OK(WriteFileAtomically(out, dir + "summary.json", report->summary_json));
    DLIO_RETURN_NOT_OK(WriteFileAtomically(out, dir + "config.json", ConfigToJson(config)));
  }
  return Status::OK();
}

}  // namespace dlio
