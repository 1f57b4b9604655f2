#include "runner/preflight_run.h"

#include <memory>

#include "dlio/loop.h"
#include "dlio/preflight.h"
#include "dlio/registries.h"
#include "dlio/runner.h"
#include "dlio/str_cat.h"
#include "runner/accelerators.h"
#include "runner/checkpoint_options.h"

namespace dlio {

CheckpointPlan CheckpointPlanFor(const WorkloadConfig& c, int world, const Registries& registries) {
  CheckpointPlan plan;
  auto entry = registries.checkpointers.Find(CheckpointTypeFor(c));
  if (!entry.ok()) return plan;  // building the checkpointer names the problem
  const CheckpointerCapabilities& declared = entry->capabilities;
  plan.size_keys = declared.size_keys;
  plan.dlio_cadence = declared.dlio_cadence;
  if (!declared.rank_bytes) return plan;
  for (int r = 0; r < world; ++r) {
    auto bytes = declared.rank_bytes(CheckpointOptionsFor(c, r, world));
    if (!bytes.ok()) {
      plan.bytes = 0;  // the checkpointer names the problem when it is built
      break;
    }
    plan.bytes = plan.bytes > UINT64_MAX - *bytes ? UINT64_MAX : plan.bytes + *bytes;
  }
  return plan;
}

Status AgreedPreflight(const WorkloadConfig& config, const Format* format, Comm* comm,
                       const Registries& registries) {
  Status mine;
  auto host = MeasureHostResources(config, format, comm, registries);
  if (host.ok() && config.workflow.checkpoint) {
    host->checkpoint = CheckpointPlanFor(config, comm->size(), registries);
  }
  mine = host.ok() ? CheckRunFits(config, comm->size(), *host) : host.status();
  std::vector<double> first{static_cast<double>(mine.ok() ? comm->size() : comm->rank())};
  DLIO_RETURN_NOT_OK(comm->AllReduceMin(&first));
  const int root = static_cast<int>(first[0]);
  if (root >= comm->size()) return Status::OK();
  std::string wire = std::to_string(static_cast<int>(mine.code())) + " " + mine.message();
  DLIO_RETURN_NOT_OK(comm->Broadcast(&wire, root));
  const size_t space = wire.find(' ');
  const auto code = static_cast<StatusCode>(std::stoi(wire.substr(0, space)));
  std::string message = wire.substr(space + 1);
  if (comm->size() > 1) {
    message += StrCat(" (rank ", root, " of ", comm->size(), ")");
  }
  return Status(code, message);
}

namespace {

// Config refusals that only the rank count or the registries reveal (the run would stop on them
// mid-way, exit 1): here they are InvalidArgument / NotFound before anything runs, so exit 2.
Status CheckConfigForRun(const WorkloadConfig& c, int world, const Registries& registries) {
  if (auto s = registries.storages.Get(c.storage.storage_type); !s.ok()) {
    return s.status().WithContext("storage.storage_type");
  }
  if (c.workflow.checkpoint && !c.checkpoint.storage_type.empty()) {
    if (auto s = registries.storages.Get(c.checkpoint.storage_type); !s.ok()) {
      return s.status().WithContext("checkpoint.storage_type");
    }
  }
  if (!c.workflow.checkpoint) return Status::OK();
  auto entry = registries.checkpointers.Find(CheckpointTypeFor(c));
  if (!entry.ok()) return Status::OK();
  const CheckpointOptions options = CheckpointOptionsFor(c, 0, world);
  if (entry->capabilities.check_options) {
    DLIO_RETURN_NOT_OK(entry->capabilities.check_options(options));
  }
  if (!entry->capabilities.rank_bytes) return Status::OK();
  return entry->capabilities.rank_bytes(options).status();
}

// One rank's check (an accelerator thread's, when a process emulates several).
Status PreflightRank(const WorkloadConfig& input, const RunEnv& env) {
  Comm* comm = env.comm;
  std::unique_ptr<Registries> own_registries;
  const Registries* registries = env.registries;
  if (registries == nullptr) {
    own_registries = std::make_unique<Registries>();
    DLIO_RETURN_NOT_OK(RegisterBuiltins(own_registries.get()));
    registries = own_registries.get();
  }
  DLIO_ASSIGN_OR_RETURN(const WorkloadConfig config,
                        RunConfigFor(input, comm->size(), *registries));
  DLIO_RETURN_NOT_OK(CheckConfigForRun(config, comm->size(), *registries));
  std::unique_ptr<Format> format;
  if (config.workflow.generate_data || config.workflow.train) {
    DLIO_ASSIGN_OR_RETURN(auto factory, registries->formats.Get(config.dataset.format));
    DLIO_ASSIGN_OR_RETURN(format, factory());
  }
  return AgreedPreflight(config, format.get(), comm, *registries);
}

}  // namespace

Status PreflightRun(const WorkloadConfig& input, const RunEnv& env) {
  std::unique_ptr<Comm> own_comm;
  RunEnv process_env = env;
  if (process_env.comm == nullptr) {
    own_comm = MakeSerialComm();
    process_env.comm = own_comm.get();
  }
  const int threads = static_cast<int>(input.train.accelerators_per_process);
  if (threads <= 1) return PreflightRank(input, process_env);
  return runner_internal::RunAccelerators(threads, process_env, [&input](int, const RunEnv& env_k) {
    return PreflightRank(input, env_k);
  });
}

}  // namespace dlio
