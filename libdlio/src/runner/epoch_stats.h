// A rank's {rank}_per_epoch_stats.json and {rank}_output.json in the Python DLIO's structure
// (dlio_benchmark/utils/statscounter.py), plus dlio's own keys where DLIO's readers ignore them.
// docs/metrics.md, "Per-rank files".
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "dlio/runner.h"

namespace dlio {

// What {rank}_output.json says about this rank's host, as DLIO's StatsCounter does.
struct RankHostInfo {
  double memory_gb = 0;  // host_memory_GB (DLIO's GB: 2^30 bytes)
  uint64_t cpu_count = 0;
  std::string processor_name;
  int potential_caching = 0;  // 1 when summary.json's data_size_per_host_GB <= memory_gb
  nlohmann::json cpuinfo = nlohmann::json::object();  // /proc/cpuinfo, as summary.json
  nlohmann::json meminfo = nlohmann::json::object();  // /proc/meminfo
  std::string hostname;
};

// summary.json's storage statistics: for each block rank 0's first epoch has (StatsBlock), "<name>"
// with the block's summary fields and "epochs", one entry per epoch (dlio/storage.h). The cache's
// and s3's (docs/caching.md, docs/storage.md) and any other storage's, written alike.
void AddStorageStatsSummary(const std::vector<EpochReport>& epochs, nlohmann::json* summary);

// This machine's RankHostInfo; data_size_per_host_gb is summary.json's (rank 0's figure).
RankHostInfo LocalRankHostInfo(double data_size_per_host_gb);

// "%Y-%m-%dT%H:%M:%S.%f" of a wall-clock time in microseconds, in UTC or local time.
std::string FormatWallTime(int64_t wall_us, bool utc);

// DLIO's timestamp (utility.utcnow): local time as "%Y-%m-%dT%H:%M:%S.%f".
std::string DlioTimestamp(int64_t wall_us);

// {rank}_per_epoch_stats.json: per epoch ("1", ...) start, blockN, save_ckptN, end, duration
// (a string, 2 decimals), eval; a checkpoint-only run's "1" with save_ckptN and load_ckptN.
nlohmann::ordered_json PerEpochStatsJson(const RunReport& r);

// {rank}_output.json: the host keys, per epoch load / proc / compute (per-step seconds), au and
// throughput keyed by "blockN" and "eval", then hostname.
nlohmann::ordered_json RankOutputJson(const RunReport& r, const RankHostInfo& host);

}  // namespace dlio
