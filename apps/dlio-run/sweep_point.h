// One point of `dlio-run sweep`: the workload run in this process through RunWorkload, with its
// own log file and progress line, and its figures for the sweep's tables.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "dlio/comm.h"
#include "dlio/config.h"
#include "dlio/registries.h"
#include "dlio/runner.h"
#include "dlio/sweep.h"

namespace dlio_run {

struct SweepPointEnv {
  dlio::Comm* comm = nullptr;  // every rank runs every point
  const dlio::Registries* registries = nullptr;
  bool force_generate = false;
  bool quiet = false;
  // Warnings the console already showed at an earlier point: later points write them to their
  // log file only (a sweep repeats the same config warnings at every point). Null: all shown.
  std::set<std::string>* shown_warnings = nullptr;
};

// Runs `config` (a point's, validated) on this rank. The preflight check is collective, so a
// point that does not fit the host fails on every rank alike and the sweep goes on. Any later
// error in a multi-rank job ends the job (Comm::Abort, as a single run does): the other ranks
// could not be brought back to the same step.
dlio::Result<dlio::SweepMeasurement> RunSweepPoint(const dlio::WorkloadConfig& config,
                                                   const SweepPointEnv& env);

// The figures of a finished run, as its summary.json reports them.
dlio::SweepMeasurement MeasurementOf(const dlio::RunReport& report);

// This process's resident memory (VmRSS), 0 where /proc is missing.
uint64_t ResidentBytes();

}  // namespace dlio_run
