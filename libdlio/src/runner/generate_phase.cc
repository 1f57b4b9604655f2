// The generation phase: this rank's share of the dataset (and the side_io read file).
#include "runner/run_state.h"

namespace dlio::runner_internal {

Status Generate(RunState& st) {
  const WorkloadConfig& c = *st.config;
  GenerateOptions go;
  go.rank = st.comm->rank();
  go.world = st.comm->size();
  go.seed = c.train.seed;
  go.force = st.env.force_generate;
  Comm* comm = st.comm;
  go.barrier = [comm] { return comm->Barrier(); };
  go.comm = comm;
  const Clock* clock = st.env.clock;
  const int64_t start = clock->NowNanos();
  go.progress = [&st, clock, start](uint64_t done, uint64_t total, uint64_t bytes) {
    RunProgress p;
    p.phase = "generate";
    p.step = done;
    p.steps = total;
    p.bytes = bytes;
    p.elapsed_s = (clock->NowNanos() - start) * 1e-9;
    st.Progress(p);
  };
  const int64_t start_us = WallMicros();
  DLIO_ASSIGN_OR_RETURN(
      st.report.generate,
      GenerateDataset(c.dataset, *st.format, FormatOptionsFor(c), st.storage.get(), go));
  for (const std::string& warning : st.report.generate.warnings) st.Warn(warning);
  if (st.comm->rank() == 0 && !c.side_io.read_file.empty()) {
    DLIO_ASSIGN_OR_RETURN(SideIoOptions so, SideIoOptionsFor(c, 0));
    DLIO_RETURN_NOT_OK(GenerateSideFile(so, *st.registries, st.storage.get()));
  }
  TraceSpan(st.tracer.get(), "dlio.generate", "dlio", start_us, WallMicros(), -1, -1);
  return st.comm->Barrier();
}

}  // namespace dlio::runner_internal
