#include "run_workload.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>

#include "dlio/comm.h"
#include "dlio/preflight.h"
#include "dlio/runner.h"
#include "dlio/str_cat.h"
#include "dlio/version.h"

namespace dlio_run {
namespace {

void LogRunStart(spdlog::logger* logger, const dlio::WorkloadConfig& config,
                 const dlio::Comm& comm) {
  const int world = comm.size();
  const uint64_t per_process = config.train.accelerators_per_process;
  const std::string accelerators =
      per_process > 1 ? dlio::StrCat(" x ", per_process, " accelerator threads") : std::string();
  logger->info(
      "dlio {}: workload '{}' (format {}, data in {}, outputs in {}, {} comm, {} {}{})",
      dlio::kVersion, config.name, config.dataset.format, config.dataset.data_folder,
      config.output.folder, comm.name(), world,
      per_process > 1 ? (world == 1 ? "process" : "processes") : (world == 1 ? "rank" : "ranks"),
      accelerators);
}

// Logs `error`, aborts the job when there are other ranks to stop, and returns 1.
int FailRun(const dlio::Status& error, spdlog::logger* logger, dlio::Comm* comm) {
  logger->error("{}", error.ToString());
  logger->flush();
  if (comm->size() > 1) comm->Abort(error);
  return kExitRunError;
}

// Rank 0 prints the summary; the exit code.
int ReportOutcome(const dlio::Result<dlio::RunReport>& report, spdlog::logger* logger,
                  dlio::Comm* comm) {
  // The runner aborts the job itself on errors once it runs; this covers the ones before.
  if (!report.ok()) return FailRun(report.status(), logger, comm);
  logger->flush();
  if (report->rank == 0) {
    std::fputs(report->summary_text.c_str(), stdout);
    if (report->output_folder.size()) {
      std::printf("  outputs: %s/summary.json\n", report->output_folder.c_str());
    }
  }
  return kExitOk;
}

}  // namespace

int RunConfig(const RunFlags& f, const dlio::Registries& registries,
              const dlio::WorkloadConfig& config, const std::vector<std::string>& warnings,
              int* argc, char*** argv, const std::function<dlio::Status(int rank)>& before_run) {
  // MPI is initialized only once the command line and config are known good, so a usage error
  // exits every rank with code 2 without MPI having to be torn down. The mpiio storage needs MPI
  // even in a single process (an MPI singleton).
  auto comm_or = dlio::MakeComm(CommNameFor(f, config, registries), argc, argv);
  if (!comm_or.ok()) return Fail(comm_or.status(), kExitRunError);
  std::unique_ptr<dlio::Comm> comm = std::move(comm_or).value();
  const int rank = comm->rank();
  const int world = comm->size();

  auto logger = MakeRunLogger(config, f.quiet, rank, world);
  if (rank == 0) {
    for (const auto& w : warnings) logger->warn("{}", w);
  }

  ProgressLine progress(config.output.progress && !f.quiet && rank == 0 && isatty(STDERR_FILENO));
  dlio::RunEnv env;
  env.comm = comm.get();
  env.registries = &registries;
  env.force_generate = f.force;
  env.write_outputs = f.write_outputs;
  WireRunEnv(logger.get(), &progress, &env);

  // A config that cannot run here (an epoch without a step, more memory or disk than the host
  // has, an unknown format) is a usage error: exit 2 on every rank, before anything is written.
  if (auto fits = dlio::PreflightRun(config, env); !fits.ok()) {
    progress.Finish();
    if (rank == 0) Fail(fits, kExitUsage);
    return IsConfigError(fits) ? kExitUsage : kExitRunError;
  }
  if (before_run) {
    if (auto s = before_run(rank); !s.ok()) return FailRun(s, logger.get(), comm.get());
  }
  LogRunStart(logger.get(), config, *comm);
  auto report = dlio::RunWorkload(config, env);
  progress.Finish();
  return ReportOutcome(report, logger.get(), comm.get());
}

}  // namespace dlio_run
