// What the phases of one rank's run share (private to the runner). RunWorkload (runner.cc) owns
// everything they point to and runs them one after the other: generate_phase.h, storage_rules.h,
// training.h, checkpoint_phase.h, aggregate.h.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dlio/clock.h"
#include "dlio/comm.h"
#include "dlio/config.h"
#include "dlio/format.h"
#include "dlio/registries.h"
#include "dlio/runner.h"
#include "dlio/storage.h"
#include "dlio/tracer.h"

namespace dlio::runner_internal {

// Where a run's messages go: the log, the progress callback (rank 0 only) and the warnings the
// report lists. Requires external synchronization (the runner's thread).
class RunMessages {
 public:
  RunMessages(const RunEnv& env, int rank, std::vector<std::string>* warnings)
      : log_(env.log), progress_(env.progress), rank_(rank), warnings_(warnings) {}

  void Log(LogLevel level, const std::string& message) const {
    if (log_) log_(level, message);
  }
  // Logged and listed in the report's warnings.
  void Warn(const std::string& message) {
    warnings_->push_back(message);
    Log(LogLevel::kWarn, message);
  }
  void Progress(const RunProgress& p) const {
    if (progress_ && rank_ == 0) progress_(p);
  }

 private:
  LogFn log_;
  std::function<void(const RunProgress&)> progress_;
  int rank_;
  std::vector<std::string>* warnings_;
};

// What every phase reads. Owns nothing; everything outlives the phases.
struct RunContext {
  const WorkloadConfig* config = nullptr;  // validated, paths resolved, scaled to the world
  const Registries* registries = nullptr;
  Comm* comm = nullptr;
  const Clock* clock = nullptr;
  Tracer* tracer = nullptr;        // a null tracer when tracing is off
  Storage* storage = nullptr;      // the dataset's (and side_io's) files
  const Format* format = nullptr;  // dataset.format; null in checkpoint-only runs
  RunMessages* messages = nullptr;

  int rank() const { return comm->rank(); }
  int world() const { return comm->size(); }
};

// Looks `name` up in `registry` and calls its factory with `args`.
template <typename T, typename R, typename... Args>
Result<std::unique_ptr<T>> Build(const R& registry, const std::string& name, Args&&... args) {
  DLIO_ASSIGN_OR_RETURN(auto factory, registry.Get(name));
  return factory(std::forward<Args>(args)...);
}

// Records one span [start_us, end_us] (wall microseconds) on `tracer` when it is enabled.
void TraceSpan(Tracer* tracer, const char* name, const char* cat, int64_t start_us, int64_t end_us,
               int64_t epoch, int64_t step, int64_t index = -1);

}  // namespace dlio::runner_internal
