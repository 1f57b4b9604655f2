// Comm: rank, size, barrier and reductions. Serial always; MPI when built with it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

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
};

// Rank 0 of a world of 1: Barrier and Broadcast are no-ops, reductions leave values unchanged,
// Gather returns {mine}. Root arguments other than 0 are InvalidArgument.
std::unique_ptr<Comm> MakeSerialComm();

}  // namespace dlio
