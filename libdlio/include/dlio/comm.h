// Comm: rank, size, barrier and reductions. Serial always; MPI when built with it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dlio/config_enums.h"  // BarrierWait
#include "dlio/status.h"

namespace dlio {

// Collective calls must be made by every rank in the same order. Not thread-safe: call from the
// training loop's thread only.
class Comm {
 public:
  virtual ~Comm() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string name() const = 0;  // "serial", "mpi"
  virtual Status Barrier() = 0;
  // How Barrier waits (MPI only; other Comms ignore it). The MPI Comm starts with kSleep.
  virtual void set_barrier_wait(BarrierWait wait) { (void)wait; }
  // In-place element-wise reductions over all ranks.
  virtual Status AllReduceSum(std::vector<double>* values) = 0;
  virtual Status AllReduceMax(std::vector<double>* values) = 0;
  virtual Status AllReduceMin(std::vector<double>* values) = 0;
  // Gathers each rank's string at root (out is filled on root only, indexed by rank).
  virtual Status Gather(const std::string& mine, int root, std::vector<std::string>* out) = 0;
  // Root's value reaches every rank.
  virtual Status Broadcast(std::string* value, int root) = 0;
  // Ends the whole job promptly after an unrecoverable error on this rank. The MPI Comm calls
  // MPI_Abort (other ranks would otherwise hang in the next collective). The serial Comm has no
  // other process to stop and the library never exits, so it only records `status` (see
  // abort_status()) and returns: the caller must still return its error up the stack.
  virtual void Abort(const Status& status) = 0;
  // The status given to the first Abort() call, or OK if Abort was never called.
  virtual Status abort_status() const { return Status::OK(); }
  // For code that makes its own MPI calls over all ranks (parallel HDF5 writing a shared file):
  // a pointer to this Comm's MPI_Comm, valid while the Comm lives, typed void so that public
  // headers need no mpi.h (cast back with *static_cast<const MPI_Comm*>(p)). nullptr for Comms
  // without MPI (serial).
  virtual const void* mpi_comm_handle() const { return nullptr; }
  // The ranks of this rank's node, as a Comm of their own (rank() is the rank on the node, 0 the
  // node's leader): what a node-local resource (the tiered storage's shared cache,
  // docs/caching.md) is shared by. Collective over this Comm. MPI: MPI_Comm_split_type with
  // MPI_COMM_TYPE_SHARED (its Barrier waits as this Comm's does). Serial: a serial Comm (one
  // rank a node). Comms whose ranks are threads of one process: nullptr, no node-local sharing
  // (each rank is on its own).
  virtual Result<std::unique_ptr<Comm>> SplitNode() { return std::unique_ptr<Comm>(); }
};

// Rank 0 of a world of 1: Barrier and Broadcast are no-ops, reductions leave values unchanged,
// Gather returns {mine}. Root arguments other than 0 are InvalidArgument.
std::unique_ptr<Comm> MakeSerialComm();

// The MPI Comm: every rank of MPI_COMM_WORLD, over a duplicate of it (so dlio's collectives never
// match an application's messages), with MPI_ERRORS_RETURN so MPI errors come back as Status.
// Initializes MPI unless the application already did, asking for MPI_THREAD_MULTIPLE (the mpiio
// storage is called from pipeline read threads); the Comm that initialized MPI finalizes it in its
// destructor, so make one per process and destroy it after every mpiio Storage and File. If the
// application initialized MPI itself, this Comm leaves finalizing to it. `argc`/`argv` may be null.
// Reductions, Gather and Broadcast must be called by every rank with the same root and (for the
// reductions) vectors of the same length. Gather fails (InvalidArgument, on every rank) when the
// gathered strings total 2 GiB or more. Abort prints "dlio rank R of N: aborting the job: <status>"
// to stderr and calls MPI_Abort on MPI_COMM_WORLD (exit code 1); it does not return.
// Unimplemented naming DLIO_WITH_MPI when dlio was built without MPI.
Result<std::unique_ptr<Comm>> MakeMpiComm(int* argc, char*** argv);

// Picks a Comm by name: "serial", "mpi" or "auto" (mpi when LaunchedByMpi(), else serial). "auto"
// in a build without MPI but under an MPI launcher is FailedPrecondition (every process would
// otherwise run the whole workload alone, silently); "serial" is always allowed.
Result<std::unique_ptr<Comm>> MakeComm(const std::string& name, int* argc, char*** argv);

// Whether this process looks started by an MPI launcher: mpiexec/mpirun of Open MPI
// (OMPI_COMM_WORLD_SIZE), MPICH/Hydra or Slurm PMI (PMI_SIZE), PMIx launchers such as
// `srun --mpi=pmix` (PMIX_RANK), MVAPICH (MV2_COMM_WORLD_SIZE). Reads the environment only.
bool LaunchedByMpi();

// Whether dlio was built with MPI (DLIO_WITH_MPI).
bool BuiltWithMpi();

// Whether MPI is initialized and not yet finalized in this process (false without MPI).
bool MpiInitialized();

}  // namespace dlio
