// "dlio": an HDF5 virtual file driver whose reads and writes are File::ReadAt / WriteAt calls of
// a dlio::Storage. HDF5's own requests (superblock, object headers, B-tree nodes, chunks, sieve
// buffer fills) reach the Storage with their real offsets and sizes, so they are traced and
// counted like every other format's, honour FileOptions::direct, and work on any backend
// (posix, memory, slow). Files are plain HDF5: the driver writes no driver-info block.
#pragma once

#include <hdf5.h>

#include "dlio/status.h"
#include "dlio/storage.h"
#include "format/hdf5/hdf5_lib.h"

namespace dlio::format_internal {

// Registers the driver class with HDF5 and returns its id (called once per process by Hdf5Call).
hid_t RegisterDlioDriver();

// A file access property list whose files open through `storage` with `options` (the storage
// must outlive every file opened with it). Call inside an Hdf5Call.
Result<Hid> MakeDlioFapl(Hdf5Call& call, Storage* storage, const FileOptions& options);

}  // namespace dlio::format_internal
