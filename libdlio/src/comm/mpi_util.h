// What the files that call MPI share: the mpi.h include (C API only), an MPI return code as text
// and as a Status, whether MPI is usable, the int counts MPI calls take, and the opaque handle
// that Comm::mpi_comm_handle and Storage::CollectiveMpiComm hand out. Private to the MPI code:
// comm/mpi_comm.cc and storage/mpiio_storage.cc (with DLIO_WITH_MPI) and format/hdf5/
// hdf5_plists.cc (with a parallel HDF5); a module including it lists comm among its dependencies
// (libdlio/CMakeLists.txt). Everything here is inline, so it adds no link edge.
#pragma once

// The C API only; the C++ bindings are deprecated (CMake's MPI_CXX_SKIP_MPICXX defines these too).
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "dlio/status.h"
#include "dlio/str_cat.h"

namespace dlio::mpi_internal {

// The most elements one MPI call moves: counts are ints, and 2^30 keeps clear of INT_MAX.
inline constexpr uint64_t kMaxMpiCount = uint64_t{1} << 30;

// The count of the next call when `remaining` elements are left: at most kMaxMpiCount.
inline int MpiCount(uint64_t remaining) {
  return static_cast<int>(std::min(kMaxMpiCount, remaining));
}

// Whether `n` elements fit one call's int count.
inline bool FitsMpiCount(uint64_t n) {
  return n <= static_cast<uint64_t>(std::numeric_limits<int>::max());
}

// MPI_Error_string of `code`, or "MPI error <code>" when MPI cannot name it.
inline std::string MpiErrorText(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) return StrCat("MPI error ", code);
  return std::string(text, static_cast<size_t>(len));
}

// OK for MPI_SUCCESS, else IOError "<what>: <MpiErrorText>".
inline Status MpiStatus(int code, const std::string& what) {
  if (code == MPI_SUCCESS) return Status::OK();
  return Status::IOError(what + ": " + MpiErrorText(code));
}

// Whether MPI calls may be made now: MPI_Init ran and MPI_Finalize did not.
inline bool MpiUsable() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized && !finalized;
}

// The opaque handle of `comm` (which must outlive its users), and the communicator behind one.
inline const void* MpiHandleOf(const MPI_Comm& comm) { return &comm; }
inline MPI_Comm MpiCommOf(const void* handle) { return *static_cast<const MPI_Comm*>(handle); }

}  // namespace dlio::mpi_internal
