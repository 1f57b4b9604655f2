// The accelerator threads of one process (train.accelerators_per_process): K runs of one rank
// each, side by side, over a ThreadGroupComms (dlio/thread_group_comm.h).
#pragma once

#include <functional>

#include "dlio/runner.h"
#include "dlio/status.h"

namespace dlio::runner_internal {

// Calls run(k, env_k) on `threads` threads (k = 0..threads-1) and joins them. env_k is `env` with
// comm = thread k's Comm over env.comm (which must not be null; rank env.comm->rank() x threads +
// k) and a log that serializes the threads' calls (threads other than k = 0 pass on warnings and
// errors only, prefixed "accelerator rank R: "; their other messages repeat thread 0's). A thread
// whose run fails stops the group, so no other thread waits forever in a collective. Returns OK
// when every run did, else the first failure (the status that stopped the group, not the Cancelled
// of the threads it woke).
Status RunAccelerators(int threads, const RunEnv& env,
                       const std::function<Status(int k, const RunEnv& env_k)>& run);

}  // namespace dlio::runner_internal
