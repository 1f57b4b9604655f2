// The latency-adding "slow" backend, a decorator built on StorageWrapper (dlio/storage_wrapper.h).
#pragma once

#include <memory>

#include "dlio/storage.h"
#include "dlio/storage_wrapper.h"

namespace dlio {

// Adds seeded latency to every ReadAt/WriteAt of `inner`, slept through the bound Clock:
// max(0, normal(latency_us, latency_stdev_us)) + bytes / bandwidth_mib_s of the options'
// SlowOptions (storage/slow_options.h), seeded by options.seed. The k-th call on a path always gets
// the same delay for a given seed.
std::unique_ptr<Storage> NewSlowStorage(std::unique_ptr<Storage> inner,
                                        const StorageOptions& options);

// The delay in nanoseconds of call number `call` of `bytes` bytes on the file whose path hashes
// to `path_hash` (exposed for tests).
int64_t SlowDelayNanos(const StorageOptions& options, uint64_t path_hash, uint64_t call,
                       size_t bytes);

}  // namespace dlio
