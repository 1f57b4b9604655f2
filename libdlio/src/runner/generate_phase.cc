#include "runner/generate_phase.h"

#include <string>

#include "dlio/loop.h"
#include "dlio/side_io.h"
#include "runner/checkpoint_phase.h"

namespace dlio::runner_internal {

Result<GenerateReport> Generate(const RunContext& ctx, bool force) {
  const WorkloadConfig& c = *ctx.config;
  GenerateOptions go;
  go.rank = ctx.rank();
  go.world = ctx.world();
  go.seed = c.train.seed;
  go.force = force;
  Comm* comm = ctx.comm;
  go.barrier = [comm] { return comm->Barrier(); };
  go.comm = comm;
  const Clock* clock = ctx.clock;
  go.clock = clock;
  const RunMessages* messages = ctx.messages;
  const int64_t start = clock->NowNanos();
  go.progress = [messages, clock, start](uint64_t done, uint64_t total, uint64_t bytes) {
    RunProgress p;
    p.phase = "generate";
    p.step = done;
    p.steps = total;
    p.bytes = bytes;
    p.elapsed_s = (clock->NowNanos() - start) * 1e-9;
    messages->Progress(p);
  };
  const int64_t start_us = clock->WallMicros();
  DLIO_ASSIGN_OR_RETURN(
      GenerateReport report,
      GenerateDataset(c.dataset, *ctx.format, FormatOptionsFor(c), ctx.storage, go));
  for (const std::string& warning : report.warnings) ctx.messages->Warn(warning);
  for (const std::string& path : report.removed_leftovers) {
    ctx.messages->Log(LogLevel::kInfo, "removed a leftover of a dead dlio process: " + path);
  }
  if (ctx.rank() == 0 && !c.side_io.read_file.empty()) {
    DLIO_ASSIGN_OR_RETURN(SideIoOptions so, SideIoOptionsFor(c, 0));
    DLIO_RETURN_NOT_OK(GenerateSideFile(so, *ctx.registries, ctx.storage));
  }
  if (c.workflow.checkpoint && c.checkpoint.resume) {
    DLIO_RETURN_NOT_OK(WriteResumeCheckpoint(ctx));
  }
  TraceSpan(ctx.tracer, "dlio.generate", "dlio", start_us, clock->WallMicros(), -1, -1);
  DLIO_RETURN_NOT_OK(comm->Barrier());
  return report;
}

}  // namespace dlio::runner_internal
