// The MPI-IO storage ("mpiio"): files through MPI_File_*, paths (List, Rename, ...) through POSIX.
#pragma once

#include <memory>

#include "dlio/storage.h"

namespace dlio {

// Data files are opened with MPI_File_open and read with MPI_File_read_at (independent: the file
// is opened on MPI_COMM_SELF) or, with its MpiioOptions' collective (storage/mpiio_options.h),
// MPI_File_read_at_all on files opened for reading under one of options.data_dirs (all files
// opened for reading when that list is empty), which are then opened collectively on
// MPI_COMM_WORLD. Writes always use MPI_File_write_at on MPI_COMM_SELF (checkpoints and generated
// files are per rank).
//
// Collective files: every rank must open the same paths in the same order, issue the same number
// of ReadAt calls on each, and close them together, all from the thread that opened the file
// (FailedPrecondition otherwise, rather than a hang). A ReadAt makes one MPI_File_read_at_all per
// started GiB of the request, so ranks must request the same sizes; past the end of the file a
// rank joins with a count of 0 (reads are clipped to the size the file had when it was opened:
// it must not grow meanwhile).
//
// MPI must be initialized (MakeMpiComm) before the storage is made and finalized only after it
// is destroyed: FailedPrecondition otherwise. With less than MPI_THREAD_MULTIPLE, calls are
// serialized (MPI_THREAD_SERIALIZED) or refused from threads other than the main one (FUNNELED).
// Unimplemented naming DLIO_WITH_MPI when dlio is built without MPI.
Result<std::unique_ptr<Storage>> NewMpiioStorage(const StorageOptions& options);

}  // namespace dlio
