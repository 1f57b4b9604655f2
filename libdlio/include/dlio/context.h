// The context a run travels with: no mutable globals, every dependency injected here.
#pragma once

#include <cstdint>

#include "dlio/clock.h"
#include "dlio/comm.h"
#include "dlio/registries.h"
#include "dlio/storage.h"
#include "dlio/tracer.h"

namespace dlio {

// Plain pointers, none owned: whoever builds the Context owns what it points to and keeps it
// alive for the run.
struct Context {
  const Clock* clock = SystemClock();
  Storage* storage = nullptr;  // data, checkpoints and outputs
  Comm* comm = nullptr;        // serial or MPI
  Tracer* tracer = nullptr;    // null tracer when tracing is off
  const Registries* registries = nullptr;
  uint64_t seed = 123;  // train.seed: every random choice derives from it
};

}  // namespace dlio
