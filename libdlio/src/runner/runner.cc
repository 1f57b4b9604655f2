// RunWorkload: one rank's run, phase after phase (run_context.h).
#include "dlio/runner.h"

#include <memory>
#include <utility>
#include <vector>

#include "dlio/ai_events.h"
#include "dlio/loop.h"
#include "dlio/storage_wrapper.h"
#include "dlio/tracer.h"
#include "runner/accelerators.h"
#include "runner/aggregate.h"
#include "runner/checkpoint_phase.h"
#include "runner/generate_phase.h"
#include "runner/iostat_profiler.h"
#include "runner/preflight_run.h"
#include "runner/remove_generated.h"
#include "runner/report.h"
#include "runner/run_context.h"
#include "runner/run_storage.h"
#include "runner/storage_rules.h"
#include "runner/training.h"

namespace dlio {
namespace {

using runner_internal::Checkpointing;
using runner_internal::RunContext;
using runner_internal::RunMessages;
using runner_internal::TrainingParts;

// What one rank's run owns, in construction order: torn down in reverse, so the loops and the
// checkpointer go before the storages and the tracer they use.
struct RunResources {
  std::unique_ptr<Registries> own_registries;
  std::unique_ptr<Comm> own_comm;
  std::unique_ptr<Storage> own_output_storage;  // when RunEnv::output_storage is null
  std::unique_ptr<Tracer> tracer;
  std::unique_ptr<NodeShare> node_share;  // a storage the ranks of a node share
  std::unique_ptr<Storage> storage;       // when RunEnv::storage is null
  std::unique_ptr<Format> format;         // null in checkpoint-only runs
  Checkpointing checkpointing;
  TrainingParts training;
  // The storage given reader.fresh_page_share's pages (RunEnv's may outlive the run): detached
  // when the run ends.
  Storage* fresh_pages_on = nullptr;

  RunResources() = default;
  RunResources(const RunResources&) = delete;
  RunResources& operator=(const RunResources&) = delete;
  ~RunResources() {
    if (fresh_pages_on != nullptr) fresh_pages_on->set_fresh_read_pages(nullptr);
  }
};

IoStats Sum(IoStats a, const IoStats& b) {
  a.read_ops += b.read_ops;
  a.read_bytes += b.read_bytes;
  a.write_ops += b.write_ops;
  a.write_bytes += b.write_bytes;
  a.opens += b.opens;
  a.closes += b.closes;
  a.syncs += b.syncs;
  return a;
}

// The workflow's phases, in DLIO's order.
Status RunPhases(const RunContext& ctx, bool force_generate, RunResources* res, RunReport* report) {
  const WorkflowConfig& w = ctx.config->workflow;
  if (w.train) {
    DLIO_ASSIGN_OR_RETURN(report->storage_rules, runner_internal::CheckStorageRules(ctx));
  }
  if (w.generate_data) {
    DLIO_ASSIGN_OR_RETURN(report->generate, runner_internal::Generate(ctx, force_generate));
  }
  Checkpointing& ckpt = res->checkpointing;
  if (w.train) {
    if (w.checkpoint) DLIO_RETURN_NOT_OK(runner_internal::MakeCheckpointing(ctx, &ckpt));
    DLIO_RETURN_NOT_OK(runner_internal::Train(ctx, ckpt, &res->training, report));
  } else if (w.checkpoint) {
    DLIO_RETURN_NOT_OK(runner_internal::CheckpointOnly(ctx, &ckpt, report));
  }
  report->checkpoint_type = ckpt.type;
  if (w.generate_data && w.train && !ctx.config->dataset.keep_files) {
    DLIO_RETURN_NOT_OK(runner_internal::RemoveGeneratedFiles(ctx, report->generate));
  }
  DLIO_RETURN_NOT_OK(runner_internal::Aggregate(*ctx.config, ctx.comm, report));
  report->io = ctx.storage->stats();
  if (ckpt.own_storage) report->io = Sum(report->io, ckpt.own_storage->stats());
  return Status::OK();
}

// Starts what profiling.profiler names when workflow.profiling is on: iostat on rank 0 of a run
// that writes its outputs; DLIO's darshan and tensorboard are not run (a warning says so).
Status StartProfiler(const WorkloadConfig& config, int rank, bool write_outputs,
                     RunMessages* messages,
                     std::unique_ptr<runner_internal::IostatProcess>* iostat) {
  const Profiler profiler = config.profiling.profiler;
  if (!config.workflow.profiling || rank != 0 || profiler == Profiler::kNone) return Status::OK();
  if (profiler != Profiler::kIostat) {
    messages->Warn(StrCat("profiling.profiler ", EnumName(profiler),
                          " is not run by dlio (its trace is output.trace; a program's I/O: "
                          "dlio-run profile)"));
    return Status::OK();
  }
  if (!write_outputs) return Status::OK();
  DLIO_ASSIGN_OR_RETURN(*iostat, runner_internal::IostatProcess::Start(config.output.folder));
  return Status::OK();
}

// The registries and comm of `env`, or this rank's own (the built-ins; the serial comm).
Status SetRegistriesAndComm(const RunEnv& env, RunResources* res, RunContext* ctx) {
  ctx->clock = env.clock != nullptr ? env.clock : SystemClock();
  ctx->registries = env.registries;
  if (ctx->registries == nullptr) {
    res->own_registries = std::make_unique<Registries>();
    DLIO_RETURN_NOT_OK(RegisterBuiltins(res->own_registries.get()));
    ctx->registries = res->own_registries.get();
  }
  ctx->comm = env.comm;
  if (ctx->comm == nullptr) {
    res->own_comm = MakeSerialComm();
    ctx->comm = res->own_comm.get();
  }
  return Status::OK();
}

// The dataset's format, for runs that generate or read data (checkpoint-only runs read none).
Status SetFormat(const WorkloadConfig& config, RunResources* res, RunContext* ctx) {
  if (!config.workflow.generate_data && !config.workflow.train) return Status::OK();
  DLIO_ASSIGN_OR_RETURN(
      res->format, runner_internal::Build<Format>(ctx->registries->formats, config.dataset.format));
  if (config.reader.decode && !res->format->has_decoder()) {
    return Status::InvalidArgument("reader.decode is true but format '" + res->format->name() +
                                   "' has no decoder (formats with one: jpeg, png, csv)");
  }
  ctx->format = res->format.get();
  return Status::OK();
}

// Where summary.json and the per-rank files go, its output.folder made; null when the run writes
// no outputs.
Result<Storage*> OutputStorage(const WorkloadConfig& config, const RunEnv& env, RunResources* res) {
  if (!env.write_outputs) return nullptr;
  Storage* out = env.output_storage;
  if (out == nullptr) {
    res->own_output_storage = NewPosixStorage(StorageOptions());
    out = res->own_output_storage.get();
  }
  Status made = out->CreateDirs(config.output.folder);
  if (!made.ok()) return made.WithContext("output.folder");
  return out;
}

// The data storage: RunEnv's, else the process's shared one wrapped for this rank, else the one
// the config names. Rank 0 passes on its warnings.
Status SetStorage(const WorkloadConfig& config, const RunEnv& env, Storage* shared_storage,
                  RunResources* res, RunContext* ctx) {
  ctx->storage = env.storage;
  if (ctx->storage == nullptr && shared_storage != nullptr) {
    res->storage = std::make_unique<StorageWrapper>(shared_storage->name(), shared_storage);
    res->storage->Bind(ctx->clock, ctx->tracer);
    ctx->storage = res->storage.get();
  }
  if (ctx->storage == nullptr) {
    DLIO_ASSIGN_OR_RETURN(
        res->storage, runner_internal::MakeRunStorage(config, *ctx->registries, ctx->clock,
                                                      ctx->tracer, ctx->comm, &res->node_share));
    ctx->storage = res->storage.get();
  }
  if (ctx->rank() == 0) {
    for (const std::string& warning : ctx->storage->RunWarnings()) ctx->messages->Warn(warning);
  }
  if (config.reader.fresh_page_share > 0) {
    ctx->storage->set_fresh_read_pages(
        std::make_shared<FreshReadPages>(config.reader.fresh_page_share));
    res->fresh_pages_on = ctx->storage;
  }
  return Status::OK();
}

// The phases, with DLIO's profiling.profiler beside them on rank 0 (a failure to start it ends the
// job as a failed phase would, so no rank waits for it in a collective) and DLIO's one "ai_root"
// span per rank over them (its `@dft_ai` on DLIOBenchmark.run). Sets the run's wall-clock span.
Status RunTraced(const RunContext& ctx, const RunEnv& env, bool write_outputs, RunResources* res,
                 RunReport* report, int64_t* start_us, int64_t* end_us) {
  const WorkloadConfig& config = *ctx.config;
  std::unique_ptr<runner_internal::IostatProcess> iostat;
  Status status = StartProfiler(config, ctx.rank(), write_outputs, ctx.messages, &iostat);
  *start_us = ctx.clock->WallMicros();
  if (status.ok()) status = RunPhases(ctx, env.force_generate, res, report);
  if (iostat) {
    Status stopped = iostat->Stop();
    if (status.ok()) status = stopped;
  }
  if (status.ok() && res->node_share != nullptr) status = res->node_share->Finish();
  *end_us = ctx.clock->WallMicros();
  runner_internal::TraceSpan(ctx.tracer, ai_events::kRootName, ai_events::kRootCat, *start_us,
                             *end_us, -1, -1);
  Status flush = res->tracer->Flush();
  if (!status.ok() && env.abort_on_error && ctx.world() > 1) {
    // The other ranks may be waiting in a collective this rank will never join: end the job now,
    // before this rank's pipelines and files are torn down.
    ctx.comm->Abort(status);
  }
  DLIO_RETURN_NOT_OK(status);
  return flush;
}

// One rank's run (an accelerator thread's, when a process emulates several). `shared_storage`
// (not owned; null: none): the process's in-memory storage, which this rank wraps to count and
// trace its own calls, when RunEnv::storage is null.
Result<RunReport> RunRank(const WorkloadConfig& input_config, const RunEnv& env,
                          Storage* shared_storage) {
  RunResources res;
  RunContext ctx;
  DLIO_RETURN_NOT_OK(SetRegistriesAndComm(env, &res, &ctx));
  DLIO_RETURN_NOT_OK(ValidateCapabilities(input_config, *ctx.registries));
  RunReport report;
  RunMessages messages(env, ctx.rank(), &report.warnings);
  ctx.messages = &messages;
  std::vector<std::string> scaled;
  DLIO_ASSIGN_OR_RETURN(const WorkloadConfig config,
                        RunConfigFor(input_config, ctx.world(), *ctx.registries, &scaled));
  ctx.config = &config;
  for (const auto& line : scaled) messages.Log(LogLevel::kInfo, line);
  report.workload = config.name;
  report.rank = ctx.rank();
  report.world = ctx.world();
  report.output_folder = config.output.folder;
  DLIO_RETURN_NOT_OK(SetFormat(config, &res, &ctx));
  // Before anything is written: every rank agrees the run fits its host (dlio/preflight.h).
  DLIO_RETURN_NOT_OK(AgreedPreflight(config, ctx.format, ctx.comm, *ctx.registries));
  DLIO_ASSIGN_OR_RETURN(Storage* const out, OutputStorage(config, env, &res));
  DLIO_ASSIGN_OR_RETURN(res.tracer, MakeTracerFor(config, report.rank, report.world));
  ctx.tracer = res.tracer.get();
  DLIO_RETURN_NOT_OK(SetStorage(config, env, shared_storage, &res, &ctx));
  int64_t start_us = 0, end_us = 0;
  DLIO_RETURN_NOT_OK(RunTraced(ctx, env, out != nullptr, &res, &report, &start_us, &end_us));
  DLIO_RETURN_NOT_OK(WriteReports(config, ctx.comm, start_us, end_us, out, &report));
  return report;
}

// The accelerator threads of a process share an in-process memory storage (storage_type memory,
// or slow over it), as they share the host's file systems: one dataset per process, written by
// the threads' generation split and read by their shards. Null for other storages, or when the
// caller gave one (RunEnv::storage).
Result<std::unique_ptr<Storage>> SharedMemoryStorage(const WorkloadConfig& config,
                                                     const RunEnv& env) {
  if (env.storage != nullptr) return std::unique_ptr<Storage>();
  Registries own;
  const Registries* registries = env.registries;
  if (registries == nullptr) {
    DLIO_RETURN_NOT_OK(RegisterBuiltins(&own));
    registries = &own;
  }
  const StorageOptions options = StorageOptionsFor(config);
  auto capabilities = StorageCapabilitiesFor(options, registries->storages);
  if (!capabilities.ok() || !capabilities->in_process_memory) return std::unique_ptr<Storage>();
  return MakeStorage(options, registries->storages,
                     env.clock != nullptr ? env.clock : SystemClock(), nullptr);
}

}  // namespace

Result<RunReport> RunWorkload(const WorkloadConfig& config, const RunEnv& env) {
  DLIO_RETURN_NOT_OK(config.Validate());
  std::unique_ptr<Comm> own_comm;
  RunEnv process_env = env;
  if (process_env.comm == nullptr) {
    own_comm = MakeSerialComm();
    process_env.comm = own_comm.get();
  }
  process_env.comm->set_barrier_wait(config.train.barrier_wait);
  const int threads = static_cast<int>(config.train.accelerators_per_process);
  if (threads <= 1) return RunRank(config, process_env, nullptr);
  DLIO_ASSIGN_OR_RETURN(std::unique_ptr<Storage> shared, SharedMemoryStorage(config, env));
  std::vector<RunReport> reports(static_cast<size_t>(threads));
  DLIO_RETURN_NOT_OK(runner_internal::RunAccelerators(
      threads, process_env,
      [&config, &reports, storage = shared.get()](int k, const RunEnv& env_k) -> Status {
        DLIO_ASSIGN_OR_RETURN(reports[static_cast<size_t>(k)], RunRank(config, env_k, storage));
        return Status::OK();
      }));
  return std::move(reports[0]);
}

}  // namespace dlio
