// The group-per-sample layout of hdf5 (dataset.hdf5_sample_groups, dataset.hdf5_sample_members;
// docs/formats.md "hdf5: a group per sample"): sample i is the group /<prefix><i> holding one
// dataset per member, as a dataset converted with h5py (`g = f.create_group('sample_%d' % i);
// g['image'] = x; g['label'] = y`) lays it out. The first member holds the sample's bytes (an
// array of dataset.record_dims of dataset.record_element_type when they give the sample's size,
// else flat uint8); each other member a scalar int64 label. What the keys' checks, the writer
// (hdf5_group_writer.cc) and the reader (hdf5_group_reader.cc) share; no libhdf5 here, so the
// config checks link without it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dlio/config.h"
#include "dlio/format.h"
#include "dlio/status.h"
#include "format/hdf5/h5py_save.h"

namespace dlio::format_internal::hdf5 {

// One dataset of a sample's group: its name and, for the members after the first (the sample,
// whose shape and type are dataset.record_dims and record_element_type), its shape ({} = a
// scalar) and element type.
struct SampleMember {
  std::string name;
  std::vector<uint64_t> shape;
  h5py_save::H5pyType type = h5py_save::H5pyType::kI64;
  bool operator==(const SampleMember&) const = default;
};

// dataset.hdf5_sample_members ("image,label", "img,label,bbox:4:float32"; "": no members, each
// sample the dataset /<prefix><i> itself, as `f[str(i)] = x` writes it): 1 to 16 members,
// comma-separated, each a distinct name of 1 to 64 letters, digits, '_', '-' or '.'; each after
// the first may add ":shape[:dtype]" (shape 'AxB...' or 'scalar', dtype uint8, int8, int16, int32,
// int64, float16, float32 or float64; scalar int64 when not given). InvalidArgument naming the
// key and the member.
Result<std::vector<SampleMember>> ParseSampleMembers(const std::string& members);

// The key's text for `members` (a scalar int64 member by its name alone).
std::string SampleMembersText(const std::vector<SampleMember>& members);

// The numpy name of an h5py dtype H5pyTypeOf maps ("" for the strings).
std::string ElementTypeName(h5py_save::H5pyType type);

// How the groups are named: <prefix><index><suffix>, the index in decimal, zero-padded to
// `width` digits when width > 0.
struct GroupNames {
  std::string prefix, suffix;
  int width = 0;
  bool operator==(const GroupNames&) const = default;
};

// dataset.hdf5_sample_groups: a name holding one `{}` or `{:0Nd}` (N 1 to 20) where the index
// goes ("sample_{}", "{:06d}", "img{:05d}_x"), or a prefix the index follows ("sample_"). The
// rest at most 64 characters, without '/', '{', '}' or control characters. InvalidArgument naming
// the key and the value.
Result<GroupNames> ParseGroupNames(const std::string& pattern);

// The key's text for `names`: the prefix alone when the index follows it unpadded, else with
// its `{}` / `{:0Nd}`.
std::string GroupNamesText(const GroupNames& names);

// "/<prefix><i><suffix>".
std::string SampleGroupPath(const GroupNames& names, uint64_t i);

// The h5py dtype of a numpy element type name (uint8, int8, int16, int32, int64, float16,
// float32, float64); false for the others.
bool H5pyTypeOf(const std::string& element_type, h5py_save::H5pyType* out);

// The format's config checks (FormatRegistry::Entry::validate): dataset.compression_ratio's
// (ValidateHdf5CompressionRatio), then the group layout's: a prefix and members spelled right, and
// none of what it does not write (chunking, compression, the shuffle filter, a metadata file,
// several datasets per record, a record_element_type h5py's save does not write when record_dims
// is set). A /lookup table (dataset.hdf5_lookup_rows) is written after the samples, and read a
// row per sample after it with reader.hdf5_lookup_dataset.
Status ValidateHdf5Config(const WorkloadConfig& c);

}  // namespace dlio::format_internal::hdf5

namespace dlio::format_internal::hdf5 {

// The group layout of one file's samples (`spec`): per sample its group's datasets, in the order
// they are written and read (the first member, then the labels), or the sample's own dataset when
// there are no members; then /lookup (dataset.hdf5_lookup_rows), as h5py_save items.
Result<h5py_save::H5pyLayout> SampleGroupsLayout(const FileSpec& spec, const FormatOptions& o);

// Writes `path` (never over an existing file) in the group layout through libhdf5 with h5py's
// property lists (h5py_save::WriteH5pySave): sample i's bytes as FillSampleBytes makes them, its
// labels SampleLabel. `*created` is set once the file exists (hdf5_group_writer.cc). Call outside
// an Hdf5Call.
Status WriteSampleGroups(Storage* storage, const std::string& path, const FileSpec& spec,
                         const FormatOptions& o, bool* created);

}  // namespace dlio::format_internal::hdf5
