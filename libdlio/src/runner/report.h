// Writing a run's outputs: summary.json (DLIO's keys), {rank}_per_epoch_stats.json,
// {rank}_output.json, config.json, and the human-readable summary.
#pragma once

#include <cstdint>
#include <string>

#include "dlio/comm.h"
#include "dlio/config.h"
#include "dlio/runner.h"
#include "dlio/storage.h"

namespace dlio {

// "epoch 1: 8 steps, AU 98.51%, 1234.5 samples/s, 80.9 MB/s"
std::string FormatEpochLine(const char* phase, const EpochReport& epoch);

// Fills report->summary_json / summary_text (rank 0) and, with an `out` storage (null: no file),
// writes every output file into config.output.folder through it (WriteFileAtomically). Collective:
// every rank must call it.
Status WriteReports(const WorkloadConfig& config, Comm* comm, int64_t start_us, int64_t end_us,
                    Storage* out, RunReport* report);

// "1.5 GiB": 1024-based units, one decimal.
std::string HumanBytes(double bytes);

}  // namespace dlio
