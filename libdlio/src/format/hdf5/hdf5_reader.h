// The state of one open hdf5 reader, shared by the files that open it (hdf5_open.cc), read it
// (hdf5_reader.cc) and describe it (hdf5_describe.cc).
#pragma once

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "dlio/format.h"
#include "format/hdf5/hdf5_internal.h"
#include "format/hdf5/hdf5_sample_groups.h"

namespace dlio::format_internal::hdf5 {

enum class SampleLayout { kRows, kConcatenated };

// Everything HDF5 of one open reader; released under the lock by the reader's destructor.
struct ReaderHandles {
  Hid file, dset, type, file_space, mem_space;
  Hid dxpl;  // parallel HDF5: collective transfers (else invalid: H5P_DEFAULT)
  Hid meta_file, meta_offsets, meta_sizes, meta_file_space, meta_mem_space;
  void Reset() {
    // Objects before their files (a file closes only when its last object does).
    meta_mem_space.Reset();
    meta_file_space.Reset();
    meta_sizes.Reset();
    meta_offsets.Reset();
    meta_file.Reset();
    dxpl.Reset();
    mem_space.Reset();
    file_space.Reset();
    type.Reset();
    dset.Reset();
    file.Reset();
  }
};

// The group-per-sample layout of a file (hdf5_sample_groups.h): sample i is the group
// SampleGroupPath(names, i), its members read in order, the first holding the sample.
struct SampleGroups {
  bool on = false;  // false: not this layout
  GroupNames names;
  std::vector<SampleMember> members;  // none: each sample is the dataset /<prefix><i> itself
  // Found beside the samples in the root: a table with a row per sample (`labels`), which the
  // reader reads a row of after each sample; "" none.
  std::string lookup;
};

struct ReaderInfo {
  std::string path, meta_path;  // meta_path "" without a metadata file
  uint64_t meta_file_size = 0;
  uint64_t file_size = 0;
  SampleLayout layout = SampleLayout::kRows;
  std::string dataset;  // e.g. "/records"
  int rank = 0;
  std::array<hsize_t, H5S_MAX_RANK> dims{};
  uint64_t num_samples = 0, row_bytes = 0;
  std::vector<uint64_t> offsets, sizes;  // kConcatenated
  uint64_t data_bytes = 0;               // kConcatenated: length of /data
  // Sample sizes, summed up at open so DescribeJson does not visit every sample.
  uint64_t min_size = 0, max_size = 0;
  long double total_size = 0;
  // Parallel HDF5 (the storage wants the file read collectively): HDF5's MPI-IO driver reads
  // the file, not our Storage, so the reader traces each H5Dread itself (docs/formats.md).
  Storage* parallel_storage = nullptr;
  int64_t data_offset = -1;  // file offset of the sample dataset's data (contiguous), or -1
  SampleGroups groups;       // the group-per-sample layout, when groups.on

  // Bytes of sample i; 0 past the end.
  uint64_t SampleSize(uint64_t i) const {
    if (layout == SampleLayout::kRows) return row_bytes;
    return i < sizes.size() ? sizes[i] : 0;
  }
};

// The reader over what OpenReader found (hdf5_reader.cc).
std::unique_ptr<FormatReader> MakeReader(ReaderHandles h, ReaderInfo info);

// The reader of DLIO's /records_0..N-1: sample i is sample i of each of `parts` in turn
// (hdf5_reader.cc). Every part holds the same number of samples.
std::unique_ptr<FormatReader> MakeMultiDatasetReader(
    std::string path, std::vector<std::unique_ptr<FormatReader>> parts);

// The h5py model's reader over what OpenReader found, through the files it opened
// (io_models/hdf5_h5py_reader.cc): checks and opens reader.hdf5_lookup_dataset when `o` names one.
Result<std::unique_ptr<FormatReader>> MakeH5pyReader(Hdf5Call& call, Storage* storage,
                                                     const FormatOptions& o, ReaderHandles h,
                                                     ReaderInfo info);

// Whether `file`, with none of the datasets FindSampleDataset looks for first, holds a group per
// sample: every link of its root is named <prefix><i> for i = 0..n-1 (one prefix, perhaps empty;
// the indices all zero-padded to one width, or none padded), and the first is a group of
// datasets. Then sets info->groups (members: the largest dataset first, the others in the order
// they were created, their object headers' order in the file, with their shapes and dtypes) and
// returns true. Lists the root's links once: libhdf5 reads its
// symbol table (hdf5_group_reader.cc).
Result<bool> FindSampleGroups(Hdf5Call& call, hid_t file, ReaderInfo* info);

// The group-per-sample reader over the file OpenFile opened (hdf5_group_reader.cc). Declared by
// the config: samples from FormatOptions::samples_per_file when set, else the root's link count,
// and nothing else read at open; found by FindSampleGroups: /<prefix>0's first member read at open
// for the nominal sample size and shape. A sample's size is its first member's. Each read opens the
// sample's group and its members, reads each whole and closes them, as `g = f['sample_%d' % i];
// g['image'][()]` does under h5py; under io_model h5py with reader.h5py_reopen file the file is
// also opened and closed per sample.
Result<std::unique_ptr<FormatReader>> MakeGroupReader(Hdf5Call& call, Storage* storage,
                                                      IoModel model, const FormatOptions& o,
                                                      ReaderHandles h, ReaderInfo info);

// Corruption unless `d` (the metadata file's /offsets or /sizes) is a 1-D integer dataset with
// an entry per sample of `info`.
Status CheckMetadataExtent(hid_t d, const ReaderInfo& info);

// Checks entry i of the metadata file (`meta_offset`, `meta_size`) against sample i of `info`
// (`size` bytes); `*start` becomes the sample's first element (rows: its row).
Status CheckMetadataEntry(const ReaderInfo& info, uint64_t i, uint64_t size, uint64_t meta_offset,
                          uint64_t meta_size, uint64_t* start);

// The reader's DescribeJson (hdf5_describe.cc): built on demand, since it reads more than an
// open does (the chunk index of chunked datasets, /labels). Lists in "problems" what is wrong
// beyond the sample dataset: datasets that cannot be opened, extents their storage does not
// hold, chunks never written, an unreadable /labels or one of another length.
std::string DescribeFile(Hdf5Call& call, const ReaderHandles& h, const ReaderInfo& info);

}  // namespace dlio::format_internal::hdf5
