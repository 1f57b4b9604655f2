// What h5py_save.cc (writing, loading) and h5py_inspect.cc (reading a file's datasets back)
// share, and what the data files' root attributes borrow (hdf5_attributes.cc): h5py's types,
// its file access list, a root attribute written and the root's attributes found. Call inside
// an Hdf5Call.
#pragma once

#include <hdf5.h>

#include <string>
#include <vector>

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

// `d`, an attribute of the root, written to the open `file` from `data` (d.bytes(); a
// variable-length string's characters made letters) as h5py's f.attrs[name] = value writes it.
// Errors name `path` and the attribute.
Status WriteRootAttribute(format_internal::Hdf5Call& call, hid_t file, const H5pyDataset& d,
                          const char* data, const std::string& path);

// The root's attributes of the open `file`, in the order they are stored (their creation
// order), as ParseRootAttributes' items (a variable-length string's size: its longest string's
// characters). `what` names the file: Unimplemented for a type h5py_save does not write or empty
// strings; Corruption when libhdf5 cannot read them.
Result<std::vector<H5pyDataset>> RootAttributes(format_internal::Hdf5Call& call, hid_t file,
                                                const std::string& what);

}  // namespace dlio::h5py_save::internal
