#include "checkpoint/h5py_save_plan.h"

#include <memory>
#include <string>
#include <utility>

#include "checkpoint/h5py_save_options.h"
#include "format/hdf5/h5py_save.h"

namespace dlio::checkpoint_internal {
namespace {

constexpr char kFileKey[] = "checkpoint.h5py_file_name";

// checkpoint.h5py_file_name with {rank} replaced: a plain name, the same in every save's folder.
Result<std::string> H5pyFileName(const std::string& pattern, const CheckpointOptions& options) {
  std::string name = pattern;
  const bool per_rank = name.find("{rank}") != std::string::npos;
  const std::string rank = std::to_string(options.rank);
  for (size_t at; (at = name.find("{rank}")) != std::string::npos;) name.replace(at, 6, rank);
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos ||
      name.find('{') != std::string::npos || name.rfind(".dlio", 0) == 0) {
    return Status::InvalidArgument(kFileKey, ": '", pattern,
                                   "' is not a file name (no '/', not '.dlio...', no placeholder "
                                   "but {rank})");
  }
  if (!per_rank && !options.root_only && options.world > 1) {
    return Status::InvalidArgument(kFileKey, ": '", pattern, "' has no {rank}, but all ",
                                   options.world,
                                   " ranks write (use {rank} or checkpoint.rank_mode root)");
  }
  return name;
}

}  // namespace

Result<std::vector<PlannedFile>> PlanH5pySaveFiles(const CheckpointOptions& options) {
  const H5pySaveOptions own = options.sections.Value<H5pySaveOptions>();
  PlannedFile f;
  DLIO_ASSIGN_OR_RETURN(f.name, H5pyFileName(own.file_name, options));
  DLIO_ASSIGN_OR_RETURN(h5py_save::H5pyLayout layout, h5py_save::ParseH5pyDatasets(own.datasets));
  DLIO_ASSIGN_OR_RETURN(f.bytes, h5py_save::H5pySaveFileSize(layout));
  f.h5py = std::make_shared<const h5py_save::H5pyLayout>(std::move(layout));
  return std::vector<PlannedFile>{std::move(f)};
}

}  // namespace dlio::checkpoint_internal
