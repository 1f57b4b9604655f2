// What one rank's run owns and the phases RunWorkload runs over it (private to the runner).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dlio/checkpointer.h"
#include "dlio/loop.h"
#include "dlio/runner.h"
#include "dlio/side_io.h"

namespace dlio::runner_internal {

// The parts of one training (or evaluation) loop (dlio/loop.h).
using Loop = LoopParts;

// Everything one rank's run owns, torn down in reverse order of construction.
struct RunState {
  const WorkloadConfig* config = nullptr;
  RunEnv env;
  std::unique_ptr<Registries> own_registries;
  const Registries* registries = nullptr;
  std::unique_ptr<Comm> own_comm;
  Comm* comm = nullptr;
  std::unique_ptr<Tracer> tracer;
  std::unique_ptr<Storage> storage;
  std::unique_ptr<Format> format;
  std::unique_ptr<Storage> checkpoint_storage;  // when checkpoint.storage_type names another
  std::unique_ptr<Checkpointer> checkpointer;
  // The loops live here, not in Train(), so that after an error they are torn down only once
  // the other ranks were stopped (Abort): closing a collectively opened MPI file is collective.
  std::unique_ptr<Loop> train_loop, eval_loop;
  std::unique_ptr<SideIo> side_io;  // when side_io reads or writes anything
  std::vector<SampleRef> plan;
  uint64_t global_step = 0;
  RunReport report;

  void Log(LogLevel level, const std::string& message) const {
    if (env.log) env.log(level, message);
  }
  void Warn(const std::string& message) {
    report.warnings.push_back(message);
    Log(LogLevel::kWarn, message);
  }
  void Progress(const RunProgress& p) const {
    if (env.progress && comm->rank() == 0) env.progress(p);
  }
};

// Looks `name` up in `registry` and calls its factory with `args`.
template <typename T, typename R, typename... Args>
Result<std::unique_ptr<T>> Build(const R& registry, const std::string& name, Args&&... args) {
  DLIO_ASSIGN_OR_RETURN(auto factory, registry.Get(name));
  return factory(std::forward<Args>(args)...);
}

// The phases (each in its own file).
Status CheckStorageRules(RunState& st);  // storage_rules.cc
Status Generate(RunState& st);           // generate_phase.cc
Status MakeCheckpointer(RunState& st);   // checkpoint_phase.cc
Status CheckpointOnly(RunState& st);     // checkpoint_phase.cc
Status Train(RunState& st);              // training.cc
Status Aggregate(RunState& st);          // aggregate.cc
void TraceSpan(Tracer* tracer, const char* name, const char* cat, int64_t start_us, int64_t end_us,
               int64_t epoch, int64_t step, int64_t index = -1);  // training.cc

}  // namespace dlio::runner_internal
