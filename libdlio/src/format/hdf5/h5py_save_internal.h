// What h5py_save.cc (writing, loading) and h5py_inspect.cc (reading a file's datasets back)
// share: h5py's types and its file access list. Call inside an Hdf5Call.
#pragma once

#include <hdf5.h>

#include "dlio/status.h"
#include "dlio/storage.h"
#include "format/hdf5/h5py_save.h"
#include "format/hdf5/hdf5_lib.h"

namespace dlio::h5py_save::internal {

// h5py's HDF5 type for an item: the little-endian IEEE or integer type; float16 as h5py builds it
// (a 2-byte IEEE type: sign at 15, exponent at 10 of 5 bits, bias 15, mantissa of 10 bits); a
// string of `string_size` bytes as numpy's 'S<n>' (C string type, null-padded, ASCII).
Result<format_internal::Hid> TypeOf(format_internal::Hdf5Call& call, H5pyType t,
                                    uint64_t string_size = 0);

// h5py.File's access list: library version bounds (earliest, latest), over `storage`.
Result<format_internal::Hid> H5pyFapl(format_internal::Hdf5Call& call, Storage* storage);

}  // namespace dlio::h5py_save::internal
