#include "runner/run_context.h"

namespace dlio::runner_internal {

void TraceSpan(Tracer* tracer, const char* name, const char* cat, int64_t start_us, int64_t end_us,
               int64_t epoch, int64_t step, int64_t index) {
  if (!tracer->enabled()) return;
  TraceEvent e;
  e.name = name;
  e.cat = cat;
  e.start_us = start_us;
  e.dur_us = end_us - start_us;
  e.epoch = epoch;
  e.step = step;
  e.index = index;
  tracer->Record(e);
}

}  // namespace dlio::runner_internal
