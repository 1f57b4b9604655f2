// The slow storage's own options (storage.slow_*; docs/storage.md), declared as config keys by
// storage/slow_keys.cc and parsed straight into this type, which the config holds in
// StorageConfig::backends and the factory reads from StorageOptions::backends.
#pragma once

#include <string>

namespace dlio {

struct SlowOptions {
  std::string inner = "posix";  // storage.slow_inner: the storage it wraps
  double latency_us = 100;      // storage.slow_latency_us: mean added latency per call
  double latency_stdev_us = 0;  // storage.slow_latency_stdev_us: normal jitter, clipped at 0
  double bandwidth_mib_s = 0;   // storage.slow_bandwidth_mib_s: 0 = unlimited; else adds
                                // size/bandwidth per call
};

}  // namespace dlio
