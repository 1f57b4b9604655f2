// checkpoint.type h5py_save's file per checkpoint: the HDF5 file h5py writes for
// checkpoint.h5py_datasets, named checkpoint.h5py_file_name.
#pragma once

#include <vector>

#include "checkpoint/checkpoint_layout.h"
#include "dlio/checkpointer.h"

namespace dlio::checkpoint_internal {

// The one file, its size (format/hdf5/h5py_save.h: learned by writing it once into memory) and
// its datasets. InvalidArgument naming the key: bad datasets, a name that is not a plain file
// name, no {rank} when all ranks write; Unimplemented in a build without HDF5.
Result<std::vector<PlannedFile>> PlanH5pySaveFiles(const CheckpointOptions& options);

}  // namespace dlio::checkpoint_internal
