// The group-per-sample writer (hdf5_sample_groups.h): each sample a group of h5py-written
// datasets, through h5py_save's writer so the file is laid out as h5py lays it out (old-style
// groups, contiguous datasets without timestamps, libver earliest).
#include <algorithm>
#include <cstring>

#include "dlio/str_cat.h"
#include "format/content.h"
#include "format/hdf5/h5py_save.h"
#include "format/hdf5/hdf5_attributes.h"
#include "format/hdf5/hdf5_lookup.h"
#include "format/hdf5/hdf5_options.h"
#include "format/hdf5/hdf5_sample_groups.h"

namespace dlio::format_internal::hdf5 {
namespace {

using h5py_save::H5pyDataset;
using h5py_save::H5pyLayout;
using h5py_save::H5pyType;

// The first member of a sample of `bytes`: record_dims of record_element_type when they hold
// exactly that many bytes, else flat uint8.
H5pyDataset DataMember(const std::string& name, uint64_t bytes, const FormatOptions& o) {
  H5pyDataset d;
  d.name = name;
  H5pyType type{};
  if (!o.record_dims.empty() && H5pyTypeOf(o.record_element_type, &type)) {
    uint64_t n = h5py_save::ElementSize(type);
    for (uint64_t dim : o.record_dims) n *= dim;
    if (n == bytes) {
      d.type = type;
      d.shape = o.record_dims;
      return d;
    }
  }
  d.type = H5pyType::kU8;
  d.shape = {bytes};
  return d;
}

}  // namespace

Result<H5pyLayout> SampleGroupsLayout(const FileSpec& spec, const FormatOptions& o) {
  const Hdf5Options& h = Hdf5Of(o.formats);
  DLIO_ASSIGN_OR_RETURN(const GroupNames names, ParseGroupNames(h.sample_groups));
  DLIO_ASSIGN_OR_RETURN(const std::vector<SampleMember> members,
                        ParseSampleMembers(h.sample_members));
  H5pyLayout layout;
  layout.assigned = true;  // g['image'] = x, as a conversion script writes them
  layout.datasets.reserve(spec.sample_sizes.size() * std::max<size_t>(members.size(), 1) + 1);
  for (uint64_t i = 0; i < spec.sample_sizes.size(); ++i) {
    if (members.empty()) {  // f[str(i)] = x: the sample is a dataset of its own
      layout.datasets.push_back(
          DataMember(SampleGroupPath(names, i).substr(1), spec.sample_sizes[i], o));
      continue;
    }
    const std::string group = SampleGroupPath(names, i).substr(1) + "/";
    layout.datasets.push_back(DataMember(group + members[0].name, spec.sample_sizes[i], o));
    for (size_t m = 1; m < members.size(); ++m) {
      H5pyDataset d;
      d.name = group + members[m].name;
      d.shape = members[m].shape;
      d.type = members[m].type;
      layout.datasets.push_back(std::move(d));
    }
  }
  if (h.lookup_rows > 0) {  // f['lookup'] = table, after the samples, as a conversion's labels
    H5pyDataset d;
    d.name = "lookup";
    d.shape = {h.lookup_rows, h.lookup_row_bytes};
    d.type = H5pyType::kU8;
    layout.datasets.push_back(std::move(d));
  }
  if (!h.root_attributes.empty()) {  // f.attrs[name] = value, last
    DLIO_ASSIGN_OR_RETURN(std::vector<H5pyDataset> attributes,
                          h5py_save::ParseRootAttributes(h.root_attributes, kRootAttributesKey));
    for (H5pyDataset& d : attributes) layout.datasets.push_back(std::move(d));
  }
  return layout;
}

Status WriteSampleGroups(Storage* storage, const std::string& path, const FileSpec& spec,
                         const FormatOptions& o, bool* created) {
  DLIO_ASSIGN_OR_RETURN(const H5pyLayout layout, SampleGroupsLayout(spec, o));
  const Hdf5Options& h = Hdf5Of(o.formats);
  const size_t attributes =
      static_cast<size_t>(std::count_if(layout.datasets.begin(), layout.datasets.end(),
                                        [](const H5pyDataset& d) { return d.is_attribute(); }));
  const size_t samples_end = layout.datasets.size() - (h.lookup_rows > 0 ? 1 : 0) - attributes;
  const size_t per_sample = spec.sample_sizes.empty() ? 1 : samples_end / spec.sample_sizes.size();
  // Datasets come in the layout's order, one fill each: the k-th is member k % per_sample of
  // sample k / per_sample. A scalar int64 member holds the sample's label, another member bytes
  // of its own stream; /lookup's row r holds r's label, repeated (as the other writers').
  size_t k = 0;
  const h5py_save::FillData fill = [&](uint64_t, size_t n, char* dst) {
    if (k >= samples_end) {  // one fill of the whole table (or of an attribute's value)
      FillLookupBytes(spec.seed, h.lookup_row_bytes, reinterpret_cast<uint8_t*>(dst), n);
      return;
    }
    const uint64_t sample = k / per_sample;
    const size_t member = k % per_sample;
    const H5pyDataset& d = layout.datasets[k];
    if (member == 0 || !d.shape.empty() || d.type != H5pyType::kI64) {
      const uint64_t seed = member == 0 ? spec.seed : spec.seed ^ (0x9e3779b97f4a7c15ULL * member);
      FillSampleBytes(seed, sample, 0, reinterpret_cast<uint8_t*>(dst), n);
    } else {
      const int64_t label = SampleLabel(spec.seed, sample);
      std::memcpy(dst, &label, std::min(n, sizeof label));  // little-endian, as h5py's int64
    }
    ++k;
  };
  std::vector<char> memory;
  DLIO_ASSIGN_OR_RETURN(const bool existed, storage->Exists(path));
  if (existed) return Status::AlreadyExists(path + ": exists; refusing to overwrite it");
  Status st = h5py_save::WriteH5pySave(storage, path, false, layout, fill, &memory);
  if (st.code() != StatusCode::kAlreadyExists) {
    auto exists = storage->Exists(path);
    *created = exists.ok() && *exists;
  }
  return st;
}

}  // namespace dlio::format_internal::hdf5
