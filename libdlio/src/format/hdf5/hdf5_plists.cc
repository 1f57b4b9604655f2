// Property lists: HDF5's MPI-IO driver, collective transfers and chunk caches.
#include <algorithm>

#include "format/hdf5/hdf5_internal.h"

#ifdef H5_HAVE_PARALLEL  // hdf5.h includes mpi.h
#include "comm/mpi_util.h"
#endif

namespace dlio::format_internal::hdf5 {

Result<Hid> MakeMpioFapl(Hdf5Call& call, const void* mpi_comm, const std::string& path) {
#ifdef H5_HAVE_PARALLEL
  Hid fapl(H5Pcreate(H5P_FILE_ACCESS));
  if (!fapl.valid() ||
      H5Pset_fapl_mpio(fapl.get(), mpi_internal::MpiCommOf(mpi_comm), MPI_INFO_NULL) < 0) {
    return call.Error(StatusCode::kInternal, path + ": H5Pset_fapl_mpio");
  }
  return fapl;
#else
  (void)call;
  (void)mpi_comm;
  return Status::Unimplemented(path +
                               ": parallel HDF5 needs an HDF5 built with MPI "
                               "(Debian: libhdf5-openmpi-dev)");
#endif
}

// Parallel HDF5: a transfer property list for collective H5Dread/H5Dwrite.
Result<Hid> MakeCollectiveDxpl(Hdf5Call& call, const std::string& path) {
#ifdef H5_HAVE_PARALLEL
  Hid dxpl(H5Pcreate(H5P_DATASET_XFER));
  if (!dxpl.valid() || H5Pset_dxpl_mpio(dxpl.get(), H5FD_MPIO_COLLECTIVE) < 0) {
    return call.Error(StatusCode::kInternal, path + ": H5Pset_dxpl_mpio(COLLECTIVE)");
  }
  return dxpl;
#else
  (void)call;
  return Status::Unimplemented(path + ": parallel HDF5 needs an HDF5 built with MPI");
#endif
}

// A dataset access property list whose chunk cache holds at least one chunk of `chunk_bytes`
// (`exact`: exactly one chunk, for the metadata file's per-lookup reads).
Result<Hid> ChunkCacheDapl(Hdf5Call& call, uint64_t chunk_bytes, bool exact) {
  Hid dapl(H5Pcreate(H5P_DATASET_ACCESS));
  if (!dapl.valid()) return call.Error(StatusCode::kInternal, "H5Pcreate(H5P_DATASET_ACCESS)");
  const size_t nbytes =
      static_cast<size_t>(exact ? chunk_bytes : std::max<uint64_t>(kChunkCacheMin, chunk_bytes));
  const size_t nslots = exact ? 1 : H5D_CHUNK_CACHE_NSLOTS_DEFAULT;
  if (H5Pset_chunk_cache(dapl.get(), nslots, nbytes, H5D_CHUNK_CACHE_W0_DEFAULT) < 0) {
    return call.Error(StatusCode::kInternal, "H5Pset_chunk_cache");
  }
  return dapl;
}

}  // namespace dlio::format_internal::hdf5
