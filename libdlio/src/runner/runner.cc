// RunWorkload: one rank's run, phase after phase (run_state.h).
#include "dlio/runner.h"

#include <filesystem>
#include <memory>

#include "dlio/loop.h"
#include "dlio/tracer.h"
#include "runner/preflight_run.h"
#include "runner/report.h"
#include "runner/run_state.h"

namespace dlio {

using runner_internal::Aggregate;
using runner_internal::Build;
using runner_internal::CheckpointOnly;
using runner_internal::CheckStorageRules;
using runner_internal::Generate;
using runner_internal::RunState;
using runner_internal::Train;

Result<RunReport> RunWorkload(const WorkloadConfig& input_config, const RunEnv& env) {
  DLIO_RETURN_NOT_OK(input_config.Validate());
  RunState st;
  st.env = env;
  if (st.env.clock == nullptr) st.env.clock = SystemClock();
  if (env.registries == nullptr) {
    st.own_registries = std::make_unique<Registries>();
    DLIO_RETURN_NOT_OK(RegisterBuiltins(st.own_registries.get()));
    st.registries = st.own_registries.get();
  } else {
    st.registries = env.registries;
  }
  if (env.comm == nullptr) {
    st.own_comm = MakeSerialComm();
    st.comm = st.own_comm.get();
  } else {
    st.comm = env.comm;
  }
  std::vector<std::string> scaled;
  DLIO_ASSIGN_OR_RETURN(const WorkloadConfig config,
                        ScaleConfig(ResolvePaths(input_config), st.comm->size(), &scaled));
  st.config = &config;
  for (const auto& line : scaled) st.Log(LogLevel::kInfo, line);
  RunReport& report = st.report;
  report.workload = config.name;
  report.rank = st.comm->rank();
  report.world = st.comm->size();
  report.output_folder = config.output.folder;
  if (config.workflow.generate_data ||
      config.workflow.train) {  // checkpoint-only runs read no data
    DLIO_ASSIGN_OR_RETURN(st.format, Build<Format>(st.registries->formats, config.dataset.format));
    if (config.reader.decode && !st.format->has_decoder()) {
      return Status::InvalidArgument("reader.decode is true but format '" + st.format->name() +
                                     "' has no decoder (formats with one: jpeg, png, csv)");
    }
  }
  // Before anything is written: every rank agrees the run fits its host (dlio/preflight.h).
  DLIO_RETURN_NOT_OK(AgreedPreflight(config, st.format.get(), st.comm));

  std::error_code ec;
  if (env.write_outputs) {
    std::filesystem::create_directories(config.output.folder, ec);
    if (ec) {
      return Status::IOError("output.folder '" + config.output.folder +
                             "': cannot create: " + ec.message());
    }
  }
  DLIO_ASSIGN_OR_RETURN(st.tracer, MakeTracerFor(config, report.rank));
  DLIO_ASSIGN_OR_RETURN(st.storage, MakeStorage(StorageOptionsFor(config), *st.registries,
                                                st.env.clock, st.tracer.get()));

  const int64_t start_us = WallMicros();
  Status status = Status::OK();
  if (config.workflow.train) status = CheckStorageRules(st);
  if (status.ok() && config.workflow.generate_data) status = Generate(st);
  if (status.ok() && config.workflow.train) status = Train(st);
  if (status.ok() && !config.workflow.train && config.workflow.checkpoint) {
    status = CheckpointOnly(st);
  }
  if (status.ok()) status = Aggregate(st);
  const int64_t end_us = WallMicros();
  Status flush = st.tracer->Flush();
  if (!status.ok() && env.abort_on_error && st.comm->size() > 1) {
    // The other ranks may be waiting in a collective this rank will never join: end the job now,
    // before this rank's pipelines and files are torn down.
    st.comm->Abort(status);
  }
  if (!status.ok()) return status;
  DLIO_RETURN_NOT_OK(flush);

  DLIO_RETURN_NOT_OK(WriteReports(config, st.comm, start_us, end_us, env.write_outputs, &report));
  return std::move(st.report);
}

}  // namespace dlio
