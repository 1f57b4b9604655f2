// DLIO's record shapes: record_dims / record_element_type / hdf5.num_dset_per_record and the
// transformed_record_* pair, turned into the sizes the rest of dlio uses.
#include <cmath>

#include "config/config_table.h"
#include "core/element_type.h"
#include "dlio/config.h"

namespace dlio::config_internal {
namespace {

// dataset.record_length_bytes_sizes: sizes of at least 1 byte, and no other way of sizing.
Status ValidateSizeList(const DatasetConfig& d) {
  if (d.record_length_bytes_sizes.empty()) return Status::OK();
  for (size_t i = 0; i < d.record_length_bytes_sizes.size(); ++i) {
    if (d.record_length_bytes_sizes[i] == 0) {
      return Status::InvalidArgument("dataset.record_length_bytes_sizes[", i,
                                     "] is 0: a sample holds at least 1 byte");
    }
  }
  if (d.record_length_bytes_stdev > 0) {
    return Status::InvalidArgument(
        "dataset.record_length_bytes_sizes and dataset.record_length_bytes_stdev are both set: "
        "give the files' sizes or a distribution to draw them from, not both");
  }
  if (!d.record_dims.empty()) {
    return Status::InvalidArgument(
        "dataset.record_length_bytes_sizes and dataset.record_dims are both set: records of a "
        "fixed shape have one size");
  }
  return Status::OK();
}

}  // namespace

Status DeriveRecordShapes(WorkloadConfig* config) {
  DatasetConfig& d = config->dataset;
  if (!d.record_length_bytes_sizes.empty()) {
    long double sum = 0;
    for (uint64_t s : d.record_length_bytes_sizes) sum += static_cast<long double>(s);
    d.record_length_bytes = static_cast<uint64_t>(
        std::llround(sum / static_cast<long double>(d.record_length_bytes_sizes.size())));
  }
  if (!d.record_dims.empty()) {
    // A format whose records are uint8 pixels (jpeg, png) is counted again where the registries
    // are known (ApplyFormatRecordShapes, dlio/registries.h).
    DLIO_ASSIGN_OR_RETURN(d.record_length_bytes,
                          RecordShapeBytes(d.record_dims, d.record_element_type,
                                           "dataset.record_dims", "dataset.record_element_type"));
  }
  const ReaderConfig& r = config->reader;
  if (!r.transformed_record_dims.empty()) {
    DLIO_ASSIGN_OR_RETURN(
        d.record_length_bytes_resize,
        RecordShapeBytes(r.transformed_record_dims, r.transformed_record_element_type,
                         "reader.transformed_record_dims",
                         "reader.transformed_record_element_type"));
  }
  return Status::OK();
}

Status ValidateRecordShapes(const WorkloadConfig& c) {
  const DatasetConfig& d = c.dataset;
  const uint64_t dsets = Hdf5DatasetsPerRecord(c);  // format/hdf5/hdf5_keys.cc
  if (dsets < 1) {
    return Status::InvalidArgument("dataset.hdf5.num_dset_per_record must be >= 1");
  }
  // What num_dset_per_record > 1 needs of the other keys is asked of the format
  // (FormatCapabilities::datasets_per_record, ValidateCapabilities).
  DLIO_RETURN_NOT_OK(ValidateSizeList(d));
  if (d.record_dims.empty()) return Status::OK();
  if (d.record_dims[0] % dsets != 0) {
    return Status::InvalidArgument("dataset.hdf5.num_dset_per_record (", dsets,
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
