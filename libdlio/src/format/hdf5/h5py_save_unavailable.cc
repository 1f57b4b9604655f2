// h5py_save's writing and reading when dlio is built without HDF5: refused, saying how to get it.
#include "format/hdf5/h5py_save.h"

namespace dlio::h5py_save {
namespace {

Status Unavailable() {
  return Status::Unimplemented(
      "checkpoint type 'h5py_save' writes through libhdf5, and dlio was built without HDF5; "
      "reconfigure with -DDLIO_WITH_HDF5=ON");
}

}  // namespace

Status WriteH5pySave(Storage*, const std::string&, bool, const H5pyLayout&, const FillData&,
                     std::vector<char>*) {
  return Unavailable();
}

Status LoadH5pySave(Storage*, const std::string&, const H5pyLayout&, const CheckData&,
                    std::vector<char>*) {
  return Unavailable();
}

Result<uint64_t> H5pySaveFileSize(const H5pyLayout&) { return Unavailable(); }

Result<std::vector<H5pyWrite>> H5pySaveWrites(const H5pyLayout&) { return Unavailable(); }

Result<std::vector<FoundDataset>> ReadH5pyDatasets(const std::string&, const std::string&) {
  return Unavailable();
}

}  // namespace dlio::h5py_save
