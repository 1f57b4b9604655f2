// The run's storage: the one the config names, or, for a storage registered in
// Registries::node_shared_storages, the variant its factory builds (one whose state the ranks of
// a node share, dlio/storage.h).
#pragma once

#include <memory>

#include "dlio/comm.h"
#include "dlio/config.h"
#include "dlio/registries.h"
#include "dlio/storage.h"

namespace dlio::runner_internal {

// The run's storage, StorageOptionsFor(config) on `clock` and `tracer`, through the storage's
// NodeSharedStorageFn when it registered one (which may keep a node's shared part in `*share`:
// call its Finish after the run). Collective over `comm` when the storage registered one.
Result<std::unique_ptr<Storage>> MakeRunStorage(const WorkloadConfig& config,
                                                const Registries& registries, const Clock* clock,
                                                Tracer* tracer, Comm* comm,
                                                std::unique_ptr<NodeShare>* share);

}  // namespace dlio::runner_internal
