// DLIO's record shapes: record_dims / record_element_type / hdf5.num_dset_per_record and the
// transformed_record_* pair, turned into the sizes the rest of dlio uses.
#include "config/config_table.h"
#include "core/element_type.h"
#include "dlio/config.h"

namespace dlio::config_internal {
namespace {

// Image formats hold uint8 pixels: DLIO resets any other element type to uint8 for them.
bool UsesElementType(const std::string& format) { return format != "jpeg" && format != "png"; }

Result<uint64_t> ShapeBytes(const std::vector<uint64_t>& dims, const std::string& type,
                            const std::string& dims_key, const std::string& type_key) {
  const ElementType* t = FindElementType(type);
  if (t == nullptr) {
    return Status::InvalidArgument(type_key, ": '", type, "' is not one of ",
                                   JoinAccepted(ElementTypeNames()));
  }
  uint64_t bytes = t->itemsize;
  for (uint64_t d : dims) {
    if (d == 0) return Status::InvalidArgument(dims_key, ": every dimension must be >= 1, got 0");
    if (bytes > (uint64_t{1} << 40) / d) {
      return Status::InvalidArgument(dims_key, ": the record is larger than 1 TiB");
    }
    bytes *= d;
  }
  return bytes;
}

}  // namespace

Status DeriveRecordShapes(WorkloadConfig* config) {
  DatasetConfig& d = config->dataset;
  if (!d.record_dims.empty()) {
    const std::string type = UsesElementType(d.format) ? d.record_element_type : "uint8";
    DLIO_ASSIGN_OR_RETURN(
        d.record_length_bytes,
        ShapeBytes(d.record_dims, type, "dataset.record_dims", "dataset.record_element_type"));
  }
  const ReaderConfig& r = config->reader;
  if (!r.transformed_record_dims.empty()) {
    DLIO_ASSIGN_OR_RETURN(
        d.record_length_bytes_resize,
        ShapeBytes(r.transformed_record_dims, r.transformed_record_element_type,
                   "reader.transformed_record_dims", "reader.transformed_record_element_type"));
  }
  return Status::OK();
}

Status ValidateRecordShapes(const WorkloadConfig& c) {
  const DatasetConfig& d = c.dataset;
  if (d.hdf5_num_dset_per_record < 1) {
    return Status::InvalidArgument("dataset.hdf5.num_dset_per_record must be >= 1");
  }
  // What num_dset_per_record > 1 needs of the other keys is asked of the format
  // (FormatCapabilities::datasets_per_record, ValidateCapabilities).
  if (d.record_dims.empty()) return Status::OK();
  if (d.record_dims[0] % d.hdf5_num_dset_per_record != 0) {
    return Status::InvalidArgument("dataset.hdf5.num_dset_per_record (", d.hdf5_num_dset_per_record,
                                   ") must divide dataset.record_dims[0] (", d.record_dims[0], ")");
  }
  if (d.record_length_bytes_stdev > 0) {
    return Status::InvalidArgument(
        "dataset.record_dims and dataset.record_length_bytes_stdev are both set: records of a "
        "fixed shape have one size (give record_length_bytes with its stdev instead, as DLIO "
        "asks)");
  }
  return Status::OK();
}

}  // namespace dlio::config_internal
