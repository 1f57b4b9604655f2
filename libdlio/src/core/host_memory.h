// The memory of this host: the one measure the runner uses for its reports, the MLPerf
// dataset-size rule and the preflight check of a run's memory.
#pragma once

#include <cstdint>

namespace dlio {

// Physical memory (sysconf), lowered to the memory limit of this process's cgroup (v1 or v2) when
// one is set, as in a container whose limit is below the host's memory. 0 when unknown.
uint64_t HostMemoryBytes();

}  // namespace dlio
