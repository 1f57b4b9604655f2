#include "runner/storage_rules.h"

#include <unistd.h>

#include <cstdio>
#include <map>
#include <sstream>

#include "core/host_memory.h"
#include "dlio/str_cat.h"
#include "runner/report.h"

namespace dlio::runner_internal {
namespace {

uint64_t SaturatingMul(uint64_t a, uint64_t b) {
  if (a != 0 && b > UINT64_MAX / a) return UINT64_MAX;
  return a * b;
}

bool IsMlperfTrainingWorkload(const WorkloadConfig& c) {
  if (c.metric.mlperf_rules != MlperfRules::kAuto) return c.metric.mlperf_rules == MlperfRules::kOn;
  const std::string& n = c.model.name;
  return n == "unet3d" || n == "resnet50" || n == "cosmoflow";
}

}  // namespace

Result<StorageRulesCheck> CheckStorageRules(const RunContext& ctx) {
  const WorkloadConfig& c = *ctx.config;
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) != 0) std::snprintf(host, sizeof host, "unknown");
  std::vector<std::string> gathered;
  DLIO_RETURN_NOT_OK(
      ctx.comm->Gather(std::to_string(HostMemoryBytes()) + " " + host, 0, &gathered));
  StorageRulesCheck check;
  if (ctx.rank() != 0) return check;
  std::map<std::string, uint64_t> hosts;
  for (const auto& g : gathered) {
    std::istringstream in(g);
    uint64_t bytes = 0;
    std::string name;
    in >> bytes >> name;
    hosts[name] = bytes;
  }
  check.checked = true;
  check.num_hosts = hosts.size();
  for (const auto& [name, bytes] : hosts) check.client_memory_bytes += bytes;
  check.dataset_bytes =
      SaturatingMul(SaturatingMul(c.dataset.num_files_train, c.dataset.num_samples_per_file),
                    c.dataset.record_length_bytes);
  check.dataset_ge_5x_memory = check.client_memory_bytes > 0 &&
                               check.dataset_bytes >= SaturatingMul(5, check.client_memory_bytes);
  // In-memory (synthetic) data has no files for a page cache to hold, and O_DIRECT reads
  // (reader.odirect) bypass it.
  const bool cached = (ctx.format == nullptr || ctx.format->uses_files()) && !c.reader.odirect;
  if (cached && check.client_memory_bytes > 0 && !check.dataset_ge_5x_memory) {
    std::ostringstream m;
    m << "the dataset (" << HumanBytes(static_cast<double>(check.dataset_bytes))
      << " = dataset.num_files_train x num_samples_per_file x record_length_bytes) is "
         "smaller than 5x the client memory ("
      << HumanBytes(static_cast<double>(check.client_memory_bytes)) << " of memory on "
      << check.num_hosts << (check.num_hosts == 1 ? " host" : " hosts")
      << "): reads after the first epoch can come from the page cache, so results then measure "
         "the page cache, not storage (MLPerf Storage requires >= 5x)";
    ctx.messages->Warn(m.str());
  }
  check.mlperf_rules = IsMlperfTrainingWorkload(c);
  const uint64_t world = static_cast<uint64_t>(ctx.world());
  check.steps_per_epoch = SaturatingMul(c.dataset.num_files_train, c.dataset.num_samples_per_file) /
                          std::max<uint64_t>(1, c.reader.batch_size) / world;
  check.steps_ge_500 = check.steps_per_epoch >= 500;
  if (check.mlperf_rules && !check.steps_ge_500) {
    ctx.messages->Warn(
        StrCat("an epoch has ", check.steps_per_epoch,
               " steps (dataset.num_files_train x num_samples_per_file / reader.batch_size / ",
               world, " ranks), fewer than the 500 MLPerf Storage requires for '", c.model.name,
               "' (metric.mlperf_rules)"));
  }
  return check;
}

}  // namespace dlio::runner_internal
