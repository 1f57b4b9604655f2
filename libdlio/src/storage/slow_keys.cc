// The slow storage's config keys (storage.slow_*; docs/storage.md): declared here, beside the
// storage, and parsed straight into its SlowOptions in the config's StorageConfig::backends. The
// config module compiles this file into its key table (config/sources.cmake), as it parses a
// config before any registry exists.
#include "config/key_builders.h"
#include "storage/slow_options.h"

#define SLOW_FIELD(T, member) DLIO_BACKEND_FIELD(SlowOptions, T, member)

namespace dlio::config_internal {

void AddSlowKeys(std::vector<KeySpec>* t) {
  auto add = [t](KeySpec k) { t->push_back(std::move(k)); };
  add(String("storage.slow_inner", SLOW_FIELD(std::string, inner), "slow: the storage it wraps"));
  add(Double("storage.slow_latency_us", SLOW_FIELD(double, latency_us), {0, 60e6},
             "slow: mean latency added to every read/write, microseconds"));
  add(Double("storage.slow_latency_stdev_us", SLOW_FIELD(double, latency_stdev_us), {0, 60e6},
             "slow: normal jitter of that latency, microseconds (clipped at 0)"));
  add(Double("storage.slow_bandwidth_mib_s", SLOW_FIELD(double, bandwidth_mib_s), {0, HUGE_VAL},
             "slow: bandwidth cap in MiB/s (2^20 bytes/s); 0 = unlimited"));
}

}  // namespace dlio::config_internal

#undef SLOW_FIELD
