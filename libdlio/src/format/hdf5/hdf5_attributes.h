// Attributes of a data file's root (dataset.hdf5_root_attributes, reader.h5py_read_attributes):
// written right after the samples, as h5py's f.attrs[name] = value after create_dataset (a
// loader's metadata: fastMRI's acquisition, max, norm, patient_id), and read back all at once as
// dict(f.attrs) reads them. What libhdf5 then reads is the program's: the root's header grown
// into a continuation block at every open, and a variable-length string's characters from the
// file's global heap, once per open file.
#pragma once

#include <cstdint>
#include <string>

#include "dlio/status.h"
#include "format/hdf5/hdf5_lib.h"
#include "format/hdf5/hdf5_reader.h"

namespace dlio::format_internal::hdf5 {

// The key that gives the root's attributes, named by its errors.
inline constexpr char kRootAttributesKey[] = "dataset.hdf5_root_attributes";

// Writes the root attributes `items` gives (dataset.hdf5_root_attributes; "" none) to the open
// `file`, in order, their values made from `seed`. Errors name `path` and the attribute.
Status WriteRootAttributes(Hdf5Call& call, hid_t file, const std::string& items, uint64_t seed,
                           const std::string& path);

// dict(f.attrs) on the open `file`: every attribute of its root, in name order, opened and read
// whole (a variable-length string's characters from the global heap, then freed). Corruption
// naming `path` and the attribute when libhdf5 cannot read one.
Status ReadRootAttributes(Hdf5Call& call, hid_t file, const std::string& path);

// `inspect`'s ",\"root_attributes\":{\"items\":...,\"reads\":[{offset, bytes}...]}" of the
// open `file`: its root's attributes as dataset.hdf5_root_attributes items (in the order they
// are stored, so that the writer lays the root's header out alike), and the reads
// ReadRootAttributes makes right after the file at info.path is opened anew (through a posix
// storage of its own): where `dlio-run fit` looks for dict(f.attrs) in a trace. "" when the root
// has no attributes, or ones the key cannot give (docs/formats.md, "inspect").
std::string RootAttributesJson(Hdf5Call& call, hid_t file, const ReaderInfo& info);

}  // namespace dlio::format_internal::hdf5
