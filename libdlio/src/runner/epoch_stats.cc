#include "runner/epoch_stats.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <thread>

#include "core/host_memory.h"
#include "dlio/metrics.h"
#include "runner/summary_hosts.h"

namespace dlio {
namespace {

using ojson = nlohmann::ordered_json;

// DLIO writes epoch, block and eval durations as strings with 2 decimals ('{:.2f}').
std::string Seconds2(int64_t us) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f", us * 1e-6);
  return buf;
}

ojson Span(int64_t start_us, int64_t end_us) {
  return {{"start", DlioTimestamp(start_us)},
          {"end", DlioTimestamp(end_us)},
          {"duration", Seconds2(end_us - start_us)}};
}

// save_ckptN / load_ckptN: DLIO's duration is a number here, and throughput is the checkpoint's
// size over all ranks in GiB (DLIO's "GB") over this rank's duration. id and bytes (this rank's)
// are dlio's.
ojson CheckpointJson(const CheckpointSpan& s, uint64_t all_bytes, uint64_t id, uint64_t bytes) {
  const double secs = (s.end_us - s.start_us) * 1e-6;
  return {{"start", DlioTimestamp(s.start_us)},
          {"end", DlioTimestamp(s.end_us)},
          {"duration", secs},
          {"throughput", secs > 0 ? all_bytes / kGiB / secs : 0.0},
          {"id", id},
          {"bytes", bytes}};
}

uint64_t AllBytes(const std::vector<CheckpointOpSummary>& all, size_t i) {
  return i < all.size() ? all[i].bytes : 0;
}

const EpochReport* EvalOf(const RunReport& r, uint64_t epoch) {
  for (const auto& e : r.eval_epochs) {
    if (e.epoch == epoch) return &e;
  }
  return nullptr;
}

// DLIO's end_train: after the epoch's steps and its epoch-cadence save.
int64_t TrainEndUs(const EpochReport& e) {
  int64_t end = e.end_us;
  for (const auto& s : e.saves) end = std::max(end, s.end_us);
  return end;
}

// DLIO's end_epoch: after the evaluation that follows the epoch, if any.
int64_t EpochEndUs(const RunReport& r, const EpochReport& e) {
  const EpochReport* eval = EvalOf(r, e.epoch);
  return eval != nullptr ? std::max(TrainEndUs(e), eval->end_us) : TrainEndUs(e);
}

// dlio's whole-pass figures, beside DLIO's keys.
void AddPassFigures(const EpochReport& e, ojson* j) {
  (*j)["steps"] = e.metrics.steps;
  (*j)["au"] = e.metrics.au_percent;
  (*j)["throughput"] = e.metrics.samples_per_s;
  (*j)["io_MB_per_second"] = e.metrics.bytes_per_s / kMB;
  (*j)["io_MiB_per_second"] = e.metrics.bytes_per_s / kMiB;
}

ojson TrainEpochStats(const RunReport& r, const EpochReport& e) {
  ojson j;
  j["start"] = DlioTimestamp(e.start_us);
  for (size_t b = 0; b < e.blocks.size(); ++b) {
    j["block" + std::to_string(b + 1)] = Span(e.blocks[b].start_us, e.blocks[b].end_us);
    for (const auto& s : e.saves) {
      if (s.block != b + 1 || s.index >= r.checkpoints.size()) continue;
      const CheckpointResult& cp = r.checkpoints[s.index];
      j["save_ckpt" + std::to_string(s.block)] =
          CheckpointJson(s, AllBytes(r.checkpoint_saves_all, s.index), cp.id, cp.bytes_written);
    }
  }
  j["end"] = DlioTimestamp(EpochEndUs(r, e));
  j["duration"] = Seconds2(TrainEndUs(e) - e.start_us);
  if (const EpochReport* eval = EvalOf(r, e.epoch)) {
    ojson ej = Span(eval->start_us, eval->end_us);
    AddPassFigures(*eval, &ej);
    j["eval"] = ej;
  }
  // dlio's: DLIO's duration unrounded.
  j["duration_seconds"] = (TrainEndUs(e) - e.start_us) * 1e-6;
  AddPassFigures(e, &j);
  for (const StatsBlock& block : e.storage_stats) {
    ojson value = ojson::parse(block.epoch_json, nullptr, /*allow_exceptions=*/false);
    j[block.name] = value.is_discarded() ? ojson(block.epoch_json) : value;
  }
  return j;
}

// DLIO's _checkpoint(): one epoch "1" holding every save and load (no duration).
ojson CheckpointOnlyStats(const RunReport& r) {
  ojson j;
  j["start"] = DlioTimestamp(r.checkpoint_only_start_us);
  for (const auto& s : r.checkpoint_only_saves) {
    if (s.index >= r.checkpoints.size()) continue;
    const CheckpointResult& cp = r.checkpoints[s.index];
    j["save_ckpt" + std::to_string(s.block)] =
        CheckpointJson(s, AllBytes(r.checkpoint_saves_all, s.index), cp.id, cp.bytes_written);
  }
  for (const auto& s : r.checkpoint_only_loads) {
    if (s.index >= r.checkpoint_loads.size()) continue;
    const CheckpointResult& cp = r.checkpoint_loads[s.index];
    j["load_ckpt" + std::to_string(s.block)] =
        CheckpointJson(s, AllBytes(r.checkpoint_loads_all, s.index), cp.id, cp.bytes_read);
  }
  j["end"] = DlioTimestamp(r.checkpoint_only_end_us);
  return j;
}

// One block's (or an evaluation's) per-step lists into an epoch of {rank}_output.json. proc is
// DLIO's load + compute of a step; barrier and bytes are dlio's.
void AddSteps(const std::string& key, const std::vector<StepRecord>& steps, size_t first,
              size_t count, const BlockMetrics& m, ojson* epoch) {
  ojson load = ojson::array(), proc = ojson::array(), compute = ojson::array(),
        barrier = ojson::array(), bytes = ojson::array();
  for (size_t i = first; i < first + count && i < steps.size(); ++i) {
    const StepRecord& s = steps[i];
    load.push_back(s.load_ns * 1e-9);
    proc.push_back((s.load_ns + s.compute_ns) * 1e-9);
    compute.push_back(s.compute_ns * 1e-9);
    barrier.push_back(s.barrier_ns * 1e-9);
    bytes.push_back(s.bytes);
  }
  (*epoch)["load"][key] = load;
  (*epoch)["proc"][key] = proc;
  (*epoch)["throughput"][key] = m.samples_per_s;
  (*epoch)["au"][key] = m.au_percent;
  (*epoch)["compute"][key] = compute;
  (*epoch)["barrier"][key] = barrier;
  (*epoch)["bytes"][key] = bytes;
}

ojson EmptyOutputEpoch() {
  ojson j;
  for (const char* k : {"load", "proc", "throughput", "au", "compute"}) j[k] = ojson::object();
  return j;
}

}  // namespace

namespace {

// A block's JSON text (its storage's; one that does not parse is kept as a string).
nlohmann::json BlockJson(const std::string& text) {
  nlohmann::json value = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return value.is_discarded() ? nlohmann::json(text) : value;
}

}  // namespace

void AddStorageStatsSummary(const std::vector<EpochReport>& epochs, nlohmann::json* summary) {
  using json = nlohmann::json;
  if (epochs.empty()) return;
  for (const StatsBlock& first : epochs[0].storage_stats) {
    json entries = json::array();
    for (const EpochReport& e : epochs) {
      json entry = json::object();
      for (const StatsBlock& block : e.storage_stats) {
        if (block.name != first.name) continue;
        json value = BlockJson(block.epoch_json);
        if (block.epoch_key.empty()) {
          entry = std::move(value);
        } else {
          entry[block.epoch_key] = std::move(value);
        }
        break;
      }
      entry["epoch"] = e.epoch;
      entries.push_back(std::move(entry));
    }
    json out = BlockJson(first.summary_json);
    if (!out.is_object()) out = json::object();
    out["epochs"] = std::move(entries);
    (*summary)[first.name] = std::move(out);
  }
}

std::string FormatWallTime(int64_t wall_us, bool utc) {
  const time_t secs = static_cast<time_t>(wall_us / 1000000);
  struct tm t;
  if (utc) {
    gmtime_r(&secs, &t);
  } else {
    localtime_r(&secs, &t);
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06lld", t.tm_year + 1900,
                t.tm_mon + 1, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec,
                static_cast<long long>(wall_us % 1000000));
  return buf;
}

std::string DlioTimestamp(int64_t wall_us) { return FormatWallTime(wall_us, /*utc=*/false); }

RankHostInfo LocalRankHostInfo(double data_size_per_host_gb) {
  RankHostInfo h;
  h.memory_gb = HostMemoryBytes() / kGiB;
  h.cpu_count = std::thread::hardware_concurrency();
  h.cpuinfo = ProcKeyValues("/proc/cpuinfo");
  h.meminfo = ProcKeyValues("/proc/meminfo");
  h.processor_name = h.cpuinfo.value("model name", std::string());
  h.potential_caching = data_size_per_host_gb <= h.memory_gb ? 1 : 0;
  char buf[256] = {0};
  h.hostname = gethostname(buf, sizeof buf - 1) == 0 ? buf : "unknown";
  return h;
}

ojson PerEpochStatsJson(const RunReport& r) {
  ojson out = ojson::object();
  for (const auto& e : r.epochs) out[std::to_string(e.epoch)] = TrainEpochStats(r, e);
  if (r.checkpoint_only_start_us != 0) out["1"] = CheckpointOnlyStats(r);
  return out;
}

ojson RankOutputJson(const RunReport& r, const RankHostInfo& host) {
  ojson out;
  out["host_memory_GB"] = host.memory_gb;
  out["host_cpu_count"] = host.cpu_count;
  out["host_processor_name"] = host.processor_name;
  out["potential_caching"] = host.potential_caching;
  out["host_cpuinfo"] = host.cpuinfo;
  out["host_meminfo"] = host.meminfo;
  for (const auto& e : r.epochs) {
    ojson j = EmptyOutputEpoch();
    for (size_t b = 0; b < e.blocks.size(); ++b) {
      const BlockReport& block = e.blocks[b];
      AddSteps("block" + std::to_string(b + 1), e.steps, block.first_step, block.steps,
               block.metrics, &j);
    }
    if (const EpochReport* eval = EvalOf(r, e.epoch)) {
      AddSteps("eval", eval->steps, 0, eval->steps.size(), eval->metrics, &j);
    }
    j["host_meminfo"] = host.meminfo;  // read when the file is written (DLIO: at epoch start)
    j["end"] = DlioTimestamp(EpochEndUs(r, e));
    out[std::to_string(e.epoch)] = j;
  }
  if (r.checkpoint_only_start_us != 0) {
    ojson j;
    j["start"] = DlioTimestamp(r.checkpoint_only_start_us);
    j.update(EmptyOutputEpoch());
    j["end"] = DlioTimestamp(r.checkpoint_only_end_us);
    out["1"] = j;
  }
  out["hostname"] = host.hostname;
  return out;
}

}  // namespace dlio
