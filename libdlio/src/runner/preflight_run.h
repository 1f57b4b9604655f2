// The preflight as a run makes it: measured on every rank, with one verdict for all.
#pragma once

#include "dlio/comm.h"
#include "dlio/config.h"
#include "dlio/format.h"
#include "dlio/status.h"

namespace dlio {

class Registries;

// Measures this rank's host (MeasureHostResources) and checks `config` (validated, scaled and
// resolved) against it (CheckRunFits). Collective over `comm`: every rank returns the status of
// the first rank whose check failed (or whose measuring failed), so the ranks stop together and
// none waits in a collective the others left. `format` may be null (then no disk check);
// `registries` say which storages are on a local file system and what the checkpointer writes
// (CheckpointPlanFor, for the world of `comm`).
Status AgreedPreflight(const WorkloadConfig& config, const Format* format, Comm* comm,
                       const Registries& registries);

}  // namespace dlio
