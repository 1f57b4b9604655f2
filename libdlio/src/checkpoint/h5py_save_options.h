// The h5py_save checkpointer's own options (checkpoint.h5py_*; docs/workloads.md), held in
// CheckpointOptions::sections as torch_save's are. Its keys are declared by
// checkpoint/h5py_save_keys.cc; the checkpointer reads them in PlanH5pySaveFiles
// (h5py_save_plan.cc). Header-only and free of other headers of dlio (the config module compiles
// the key file).
#pragma once

#include <string>

namespace dlio {

struct H5pySaveOptions {
  // checkpoint.h5py_datasets: "name:shape[:dtype], ..." (format/hdf5/h5py_save.h).
  std::string datasets;
  // checkpoint.h5py_file_name: the file's name in each checkpoint folder, "{rank}" replaced by the
  // rank.
  std::string file_name = "model-rank{rank}.h5";
};

}  // namespace dlio
