// The hdf5 format when dlio is built without HDF5: the name stays known and says how to get it.
#include "format/formats.h"

namespace dlio::format_internal {

Result<std::unique_ptr<Format>> MakeHdf5Format() {
  return Status::Unimplemented("dlio was built without HDF5; reconfigure with -DDLIO_WITH_HDF5=ON");
}

}  // namespace dlio::format_internal
