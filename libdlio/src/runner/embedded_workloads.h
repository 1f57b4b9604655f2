// The workload YAML files of libdlio/workloads/, embedded at build time (cmake/EmbedWorkloads.cmake
// generates the definition).
#pragma once

#include <vector>

namespace dlio::runner_internal {

struct EmbeddedWorkload {
  const char* name;  // the file's stem
  const char* yaml;  // its text, unchanged
};

// In the order of DLIO_WORKLOAD_YAMLS (libdlio/src/runner/sources.cmake). Immutable.
const std::vector<EmbeddedWorkload>& EmbeddedWorkloads();

}  // namespace dlio::runner_internal
