// Helpers of the MPI test binaries (linked with tests/mpi_test_main.cc).
#pragma once

#include <memory>
#include <string>

#include "dlio/comm.h"
#include "test_util.h"

namespace dlio::testing {

// The MPI Comm of this test process (every rank of mpiexec's world).
Comm* MpiTestComm();

// A temporary directory shared by all ranks: made by rank 0, its path broadcast; removed by
// rank 0 after a barrier. Collective: construct and destroy it on every rank together.
class SharedTempDir {
 public:
  SharedTempDir() {
    Comm* comm = MpiTestComm();
    if (comm->rank() == 0) {
      dir_ = std::make_unique<TempDir>();
      path_ = dir_->path();
    }
    (void)comm->Broadcast(&path_, 0);
  }
  ~SharedTempDir() { (void)MpiTestComm()->Barrier(); }  // then rank 0's TempDir goes
  SharedTempDir(const SharedTempDir&) = delete;
  SharedTempDir& operator=(const SharedTempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::unique_ptr<TempDir> dir_;
  std::string path_;
};

}  // namespace dlio::testing
