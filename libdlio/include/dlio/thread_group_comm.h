// Comms for the accelerator threads of one process (train.accelerators_per_process): K threads,
// each a rank of its own over the processes' Comm.
#pragma once

#include <memory>
#include <vector>

#include "dlio/comm.h"
#include "dlio/status.h"

namespace dlio {

// Makes `threads` (K >= 1) Comms over `process` (not owned; it must outlive them), one for each
// thread of this process that acts as a rank: Comm k has rank() = process->rank() x K + k and
// size() = process->size() x K, so the processes' threads are numbered process by process.
//
// Each Comm is used by its own thread; the K threads make the same collectives in the same order,
// like ranks. A collective combines the K threads' arguments in the process first (a sleeping
// barrier: each deposits under a mutex, then sleeps on a futex, std::atomic::wait, no spinning),
// then the last thread to arrive makes ONE call on `process` for the whole group (reductions over
// the combined values, Gather of the K strings packed into one, Broadcast from the process that
// holds the root) and hands the result to every thread. Only that thread touches `process`, so
// `process` needs no thread safety.
//
// Errors and Abort: if one thread's collective fails (a bad root, reductions of different
// lengths, the process Comm's error), every thread of the group gets that status. Abort(status)
// from any thread stops the group: every thread waiting in a collective, and every later
// collective, returns Cancelled naming the rank that aborted and its status; abort_status() on
// every Comm of the group is that first status. When `process` has several ranks, Abort also
// calls process->Abort (the MPI Comm ends the job). Poisoning the group without that is Stop().
//
// mpi_comm_handle() is null: MPI calls of their own (collective MPI-IO) cannot include the threads.
// Reductions fail (InvalidArgument) unless the K threads pass vectors of one length; Gather and
// Broadcast unless they pass one root.
class ThreadGroupComms {
 public:
  ThreadGroupComms(Comm* process, int threads);
  ~ThreadGroupComms();
  ThreadGroupComms(const ThreadGroupComms&) = delete;
  ThreadGroupComms& operator=(const ThreadGroupComms&) = delete;

  int threads() const;
  // Thread k's Comm (0 <= k < threads()); owned by this object.
  Comm* comm(int k) const;
  // Stops the group as Abort does, without calling the process Comm's Abort: for a caller that
  // saw thread `rank` fail outside any collective. Safe from any thread. The first status wins.
  void Stop(const Status& status, int rank);
  // The first status given to Stop or Abort (OK if none).
  Status stop_status() const;

 private:
  class Group;
  class Member;
  std::unique_ptr<Group> group_;
  std::vector<std::unique_ptr<Comm>> comms_;
};

}  // namespace dlio
