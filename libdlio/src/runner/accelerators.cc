#include "runner/accelerators.h"

#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/thread_name.h"
#include "dlio/str_cat.h"
#include "dlio/thread_group_comm.h"

namespace dlio::runner_internal {

Status RunAccelerators(int threads, const RunEnv& env,
                       const std::function<Status(int k, const RunEnv& env_k)>& run) {
  if (env.comm == nullptr) return Status::Internal("RunAccelerators: env.comm is null");
  if (threads < 1) {
    return Status::InvalidArgument("train.accelerators_per_process must be >= 1, got ", threads);
  }
  ThreadGroupComms group(env.comm, threads);
  std::mutex log_mu;
  std::vector<Status> statuses(static_cast<size_t>(threads));
  std::vector<std::thread> workers;
  workers.reserve(static_cast<size_t>(threads));
  for (int k = 0; k < threads; ++k) {
    RunEnv env_k = env;
    env_k.comm = group.comm(k);
    if (env.log) {
      const int rank = env_k.comm->rank();
      env_k.log = [&log_mu, &env, k, rank](LogLevel level, const std::string& message) {
        if (k > 0 && level != LogLevel::kWarn && level != LogLevel::kError) return;
        std::lock_guard<std::mutex> lock(log_mu);
        env.log(level, k == 0 ? message : StrCat("accelerator rank ", rank, ": ", message));
      };
    }
    workers.emplace_back([&group, &statuses, &run, env_k = std::move(env_k), k] {
      NameThisThread("dlio-accel", static_cast<size_t>(k));
      Status s = run(k, env_k);
      if (!s.ok()) group.Stop(s, env_k.comm->rank());
      statuses[static_cast<size_t>(k)] = std::move(s);
    });
  }
  for (auto& w : workers) w.join();
  Status first = group.stop_status();
  if (!first.ok()) return first;
  for (const auto& s : statuses) {
    if (!s.ok()) return s;
  }
  return Status::OK();
}

}  // namespace dlio::runner_internal
