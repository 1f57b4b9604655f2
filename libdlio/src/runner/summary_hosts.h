// summary.json's per-host keys as the Python DLIO writes them (host_memory_GB, host_cpu_count,
// potential_caching: one entry per host; data_size_per_host_GB; rank 0's host_cpuinfo,
// host_meminfo and host_processor_name). GB here is DLIO's: 2^30 bytes. docs/metrics.md.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dlio/config.h"

namespace dlio {

// DLIO's "GB": 2^30 bytes (host memory, checkpoint sizes and throughputs in its reports).
inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// What a rank adds to its digest for these keys (its host's memory and CPUs).
void AddHostDigest(nlohmann::json* digest);

// DLIO's `key: value` lines of a /proc file (/proc/cpuinfo: the last processor's), without
// "processor"; an empty object when the file cannot be read.
nlohmann::json ProcKeyValues(const std::string& path);

// DLIO's data_size_per_host_GB: the ranks of rank 0's host x their share of the training samples
// x the record length, in 2^30 bytes. `ranks`: the digests, in rank order.
double DataSizePerHostGB(const WorkloadConfig& config, const std::vector<nlohmann::json>& ranks,
                         int world);

// Adds the per-host keys to `summary` from the ranks' digests (in rank order; hosts in the order
// of their first rank). `world` ranks read the dataset of `config`.
void AddDlioHostKeys(const WorkloadConfig& config, const std::vector<nlohmann::json>& ranks,
                     int world, nlohmann::json* summary);

}  // namespace dlio
