// The hdf5 format's own options (dataset.enable_chunking, chunk_size, chunk_samples, hdf5_shuffle,
// metadata_file, hdf5_lookup_rows, hdf5_lookup_row_bytes, hdf5_root_attributes,
// hdf5.num_dset_per_record, hdf5_sample_groups, hdf5_sample_members; reader.h5py_reopen,
// hdf5_lookup_dataset, hdf5_lookup_order, h5py_read_attributes), declared as config keys by
// format/hdf5/hdf5_keys.cc and parsed straight into this type, which the config holds in
// DatasetConfig::formats and the format (and the h5py model) reads from FormatOptions::formats. The
// codec and DLIO's record shape are the common dataset.compression and dataset.record_dims /
// record_element_type (FormatOptions).
#pragma once

#include <cstdint>
#include <string>

#include "dlio/config_enums.h"
#include "dlio/option_sections.h"

namespace dlio {

struct Hdf5Options {
  bool enable_chunking = false;  // chunked layout (false: contiguous)
  uint64_t chunk_size = 0;       // bytes per chunk (rounded to whole samples)
  uint64_t chunk_samples = 0;    // samples per chunk; when > 0 it wins over chunk_size
  bool shuffle_filter = false;   // byte-shuffle filter before compression (dataset.hdf5_shuffle)
  bool metadata_file = false;    // write/consult a separate per-sample offset/size file
  // Writers: a uint8 table /lookup of lookup_rows x lookup_row_bytes in every file (0 = none;
  // dataset.hdf5_lookup_rows, dataset.hdf5_lookup_row_bytes).
  uint64_t lookup_rows = 0;
  uint64_t lookup_row_bytes = 8;
  // Writers: attributes of every file's root, written after its datasets as h5py's
  // f.attrs[name] = value after create_dataset, as "@name:shape:dtype" items
  // (dataset.hdf5_root_attributes; h5py_save::ParseRootAttributes); "" = none.
  std::string root_attributes;
  // The h5py model only (io_model h5py; reader.h5py_reopen):
  H5pyReopen h5py_reopen = H5pyReopen::kFile;
  // A small dataset of the same file (e.g. "/labels", a coordinates table) whose row
  // (i mod its length) is read with sample i, through libhdf5's caches ("" = none;
  // reader.hdf5_lookup_dataset), before or after the sample's data (reader.hdf5_lookup_order;
  // LookupBeforeSample).
  std::string lookup_dataset;
  LookupOrder lookup_order = LookupOrder::kAuto;
  // Every attribute of the root read after each sample, as dict(f.attrs) in a Dataset's
  // __getitem__ (reader.h5py_read_attributes): libhdf5 reads a variable-length string's
  // characters from the file's global heap once per open file.
  bool h5py_read_attributes = false;
  // DLIO's datasets per record (dataset.hdf5.num_dset_per_record). Writers: when
  // FormatOptions::record_dims is set and every sample of a file is prod(record_dims) x the
  // element type's size, the samples are DLIO's /records_0..records_<num_dsets-1>, each
  // [n, record_dims[0] / num_dsets, ...] of FormatOptions::record_element_type (a leading 1
  // dropped, as DLIO does) holding its share of every sample's bytes. Readers: with num_dsets > 1
  // a sample is row i of each of those datasets, in order (DLIO's reader).
  uint64_t num_dsets = 1;
  // A group per sample (dataset.hdf5_sample_groups, dataset.hdf5_sample_members;
  // hdf5_sample_groups.h): sample i is the group /<sample_groups><i> holding one dataset per
  // comma-separated member, the first the sample's bytes, each other a scalar int64 label. ""
  // = DLIO's layouts above. Readers also find the layout in a file without /records (its groups
  // listed once at open).
  std::string sample_groups;
  std::string sample_members = "image,label";
};

// The hdf5 section of `sections` (FormatOptions::formats, DatasetConfig::formats), or the
// defaults when it was never set; no copy.
inline const Hdf5Options& Hdf5Of(const OptionSections& sections) {
  static const Hdf5Options kDefaults;
  const Hdf5Options* set = sections.Find<Hdf5Options>();
  return set != nullptr ? *set : kDefaults;
}

}  // namespace dlio
