#include "runner/run_storage.h"

#include <filesystem>
#include <string>
#include <vector>

#include "dlio/loop.h"

namespace dlio::runner_internal {
namespace {

// The folders a node's shared storage may hand out files of: the run's dataset and checkpoint
// folders (checkpoints are read back through the same storage), made absolute as the ranks'
// paths are.
std::vector<std::string> SharedDataFolders(const WorkloadConfig& config) {
  std::vector<std::string> dirs;
  for (const std::string& dir : {config.dataset.data_folder, config.checkpoint.checkpoint_folder}) {
    std::error_code ec;
    const std::filesystem::path abs = std::filesystem::absolute(dir.empty() ? "." : dir, ec);
    if (!ec) dirs.push_back(abs.string());
  }
  return dirs;
}

}  // namespace

Result<std::unique_ptr<Storage>> MakeRunStorage(const WorkloadConfig& config,
                                                const Registries& registries, const Clock* clock,
                                                Tracer* tracer, Comm* comm,
                                                std::unique_ptr<NodeShare>* share) {
  const StorageOptions options = StorageOptionsFor(config);
  if (!registries.node_shared_storages.Contains(options.name)) {
    return MakeStorage(options, registries.storages, clock, tracer);
  }
  DLIO_ASSIGN_OR_RETURN(NodeSharedStorageFn make,
                        registries.node_shared_storages.Get(options.name));
  NodeShareEnv env;
  env.storages = &registries.storages;
  env.clock = clock;
  env.tracer = tracer;
  env.comm = comm;
  env.data_dirs = SharedDataFolders(config);
  return make(options, env, share);
}

}  // namespace dlio::runner_internal
