#include "sweep_point.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "run_common.h"

namespace dlio_run {
namespace {

// Rank 0's AU on every rank, so that the search's decisions agree whatever the reduction's
// rounding on each rank.
dlio::Status AgreeOnAu(dlio::Comm* comm, double* au) {
  if (comm == nullptr || comm->size() < 2) return dlio::Status::OK();
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", *au);
  std::string value = buf;
  DLIO_RETURN_NOT_OK(comm->Broadcast(&value, 0));
  *au = std::strtod(value.c_str(), nullptr);
  return dlio::Status::OK();
}

// A warning the console showed at an earlier point goes to this point's log file only.
void QuietRepeatedWarnings(spdlog::logger* logger, std::set<std::string>* shown,
                           dlio::RunEnv* env) {
  if (shown == nullptr) return;
  std::shared_ptr<spdlog::logger> file_only;
  if (logger->sinks().size() > 1) {
    file_only = std::make_shared<spdlog::logger>("dlio", logger->sinks().back());
  }
  env->log = [inner = env->log, file_only, shown](dlio::LogLevel level, const std::string& msg) {
    if (level == dlio::LogLevel::kWarn && !shown->insert(msg).second) {
      if (file_only) file_only->warn("{}", msg);
      return;
    }
    inner(level, msg);
  };
}

}  // namespace

dlio::SweepMeasurement MeasurementOf(const dlio::RunReport& report) {
  dlio::SweepMeasurement m;
  m.au_percent = report.au_mean_percent;
  m.samples_per_s = report.throughput_mean_samples_per_s;
  m.bytes_per_s = report.io_mean_bytes_per_s;
  for (const auto& e : report.epochs) m.epoch_seconds.push_back((e.end_us - e.start_us) * 1e-6);
  m.has_steady = report.epochs.size() >= 2;
  m.first_epoch_au_percent = report.first_epoch_au_percent;
  m.first_epoch_samples_per_s = report.first_epoch_samples_per_s;
  m.steady_au_percent = report.steady_au_mean_percent;
  m.steady_samples_per_s = report.steady_samples_per_s_mean;
  m.accelerators = static_cast<uint64_t>(report.world);
  const auto summary =
      nlohmann::json::parse(report.summary_json, nullptr, /*allow_exceptions=*/false);
  if (summary.is_object() && summary.contains("num_accelerators") &&
      summary["num_accelerators"].is_number_unsigned()) {
    m.accelerators = summary["num_accelerators"].get<uint64_t>();
  }
  m.output_folder = report.output_folder;
  return m;
}

dlio::Result<dlio::SweepMeasurement> RunSweepPoint(const dlio::WorkloadConfig& config,
                                                   const SweepPointEnv& point_env) {
  const int rank = point_env.comm->rank();
  const int world = point_env.comm->size();
  auto logger = MakeRunLogger(config, point_env.quiet, rank, world);
  ProgressLine progress(config.output.progress && !point_env.quiet && rank == 0 &&
                        isatty(STDERR_FILENO));
  dlio::RunEnv env;
  env.comm = point_env.comm;
  env.registries = point_env.registries;
  env.force_generate = point_env.force_generate;
  WireRunEnv(logger.get(), &progress, &env);
  QuietRepeatedWarnings(logger.get(), point_env.shown_warnings, &env);

  if (auto fits = dlio::PreflightRun(config, env); !fits.ok()) return fits;
  auto report = dlio::RunWorkload(config, env);
  progress.Finish();
  if (!report.ok()) {
    logger->error("{}", report.status().ToString());
    logger->flush();
    if (world > 1) point_env.comm->Abort(report.status());
    return report.status();
  }
  logger->flush();
  dlio::SweepMeasurement m = MeasurementOf(*report);
  DLIO_RETURN_NOT_OK(AgreeOnAu(point_env.comm, &m.au_percent));
  return m;
}

uint64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  if (!(statm >> size >> resident)) return 0;
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace dlio_run
