// The group-per-sample reader (hdf5_sample_groups.h, hdf5_reader.h): sample i is the group
// /<prefix><i>; each read opens it and its members by name, reads each member whole and closes
// them, as an h5py program's `g = f['sample_%d' % i]; g['image'][()]; g['label'][()]` does, so
// libhdf5 walks its metadata (the root's symbol table to the group, the group's own, the members'
// object headers) through its metadata cache as it does under h5py, and the requests follow.
// Also the detection of the layout in a file that does not declare it.
#include <algorithm>
#include <charconv>

#include "format/hdf5/hdf5_attributes.h"
#include "format/hdf5/hdf5_lookup.h"
#include "format/hdf5/hdf5_reader.h"
#include "format/hdf5/hdf5_sample_groups.h"
#include "format/hdf5/hdf5_vfd.h"
#include "format/io_util.h"

namespace dlio::format_internal::hdf5 {
namespace {

// The most root links the detection lists, and the most bytes a label member may hold.
constexpr size_t kMaxSampleGroups = size_t{1} << 22;
constexpr uint64_t kMaxLabelBytes = uint64_t{1} << 20;

struct LinkNames {
  std::vector<std::string> names;
  bool too_many = false;
};

herr_t CollectLink(hid_t, const char* name, const H5L_info_t*, void* data) {
  auto* links = static_cast<LinkNames*>(data);
  if (links->names.size() >= kMaxSampleGroups) {
    links->too_many = true;
    return 1;
  }
  links->names.emplace_back(name);
  return 0;
}

// `name` = <prefix><digits>: the prefix, the index, its digits' count and whether it has a
// leading zero (a padded index).
struct IndexedName {
  std::string prefix;
  uint64_t index = 0;
  size_t digits = 0;
  bool padded = false;
};

bool SplitIndex(const std::string& name, IndexedName* out) {
  size_t k = name.size();
  while (k > 0 && name[k - 1] >= '0' && name[k - 1] <= '9') --k;
  out->digits = name.size() - k;
  if (out->digits == 0 || out->digits > 18) return false;
  std::from_chars(name.data() + k, name.data() + name.size(), out->index);
  out->prefix = name.substr(0, k);
  out->padded = out->digits > 1 && name[k] == '0';
  return true;
}

// True when `names` are exactly <prefix><i> for i = 0..n-1 of one prefix, the indices unpadded
// or all zero-padded to one width; sets `*out`.
bool IndexedNames(const std::vector<std::string>& names, GroupNames* out) {
  if (names.empty()) return false;
  std::vector<bool> seen(names.size(), false);
  IndexedName first;
  bool padded = false, widths_differ = false;
  for (size_t k = 0; k < names.size(); ++k) {
    IndexedName n;
    if (!SplitIndex(names[k], &n) || (k > 0 && n.prefix != first.prefix) ||
        n.index >= seen.size() || seen[n.index]) {
      return false;
    }
    if (k == 0) first = n;
    seen[n.index] = true;
    padded = padded || n.padded;
    widths_differ = widths_differ || n.digits != first.digits;
  }
  if (padded && widths_differ) return false;
  out->prefix = first.prefix;
  out->suffix.clear();
  out->width = padded ? static_cast<int>(first.digits) : 0;
  return true;
}

// The one root link of `names` not ending in digits, when it is a dataset with a row per other
// link (a conversion's `labels` beside its samples): taken out of `names` and returned; else "".
std::string LookupBeside(hid_t file, std::vector<std::string>* names) {
  size_t found = names->size();
  for (size_t k = 0; k < names->size(); ++k) {
    const std::string& n = (*names)[k];
    if (!n.empty() && n.back() >= '0' && n.back() <= '9') continue;
    if (found != names->size()) return "";  // two: not a table beside indexed samples
    found = k;
  }
  if (found == names->size() || names->size() < 2) return "";
  Hid d(H5Oopen(file, (*names)[found].c_str(), H5P_DEFAULT));
  if (!d.valid() || H5Iget_type(d.get()) != H5I_DATASET) return "";
  const Extent e = DatasetExtent(d.get());
  if (e.rank < 1 || e.dims[0] != names->size() - 1) return "";
  std::string name = "/" + (*names)[found];
  names->erase(names->begin() + static_cast<std::ptrdiff_t>(found));
  return name;
}

// The numpy name of a member's element type when the group writer can write it, else "".
std::string ElementName(hid_t type) {
  const size_t size = H5Tget_size(type);
  if (H5Tget_order(type) == H5T_ORDER_BE && size > 1) return "";
  if (H5Tget_class(type) == H5T_FLOAT) {
    return size == 2 ? "float16" : size == 4 ? "float32" : size == 8 ? "float64" : "";
  }
  if (H5Tget_class(type) != H5T_INTEGER) return "";
  if (H5Tget_sign(type) == H5T_SGN_NONE) return size == 1 ? "uint8" : "";
  return size == 1 ? "int8" : size == 2 ? "int16" : size == 4 ? "int32" : size == 8 ? "int64" : "";
}

// A member of a sample's group as the file holds it, with its bytes and where its object header
// is (datasets are created in that order).
struct FoundMember {
  SampleMember member;
  uint64_t bytes = 0;
  haddr_t header = 0;
};

// The member `name` of group `g`; false when it is not a dataset whose size and header are told.
bool FindMember(hid_t g, const std::string& name, FoundMember* f) {
  Hid d(H5Oopen(g, name.c_str(), H5P_DEFAULT));
  if (!d.valid() || H5Iget_type(d.get()) != H5I_DATASET) return false;
  Hid type(H5Dget_type(d.get()));
  const Extent e = DatasetExtent(d.get());
  H5O_info_t info{};
  if (!type.valid() || e.rank < 0 || H5Oget_info2(d.get(), &info, H5O_INFO_BASIC) < 0 ||
      !DeclaredBytes(e, H5Tget_size(type.get()), &f->bytes)) {
    return false;
  }
  f->member.name = name;
  f->header = info.addr;
  h5py_save::H5pyType t{};
  if (H5pyTypeOf(ElementName(type.get()), &t)) {
    f->member.type = t;
    f->member.shape.assign(e.dims.begin(), e.dims.begin() + e.rank);
  }
  return true;
}

// The datasets of group `g`: the largest first (the sample), the others in the order they were
// created, with their shapes and dtypes (one of a type the writer does not write: named alone,
// scalar int64); empty when it holds anything else.
std::vector<SampleMember> GroupMembers(hid_t g) {
  LinkNames links;
  if (H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, nullptr, &CollectLink, &links) < 0) return {};
  std::vector<FoundMember> found(links.names.size());
  for (size_t k = 0; k < found.size(); ++k) {
    if (!FindMember(g, links.names[k], &found[k])) return {};
  }
  if (found.empty()) return {};
  const auto largest = std::max_element(
      found.begin(), found.end(), [](const auto& a, const auto& b) { return a.bytes < b.bytes; });
  std::iter_swap(found.begin(), largest);
  std::stable_sort(found.begin() + 1, found.end(),
                   [](const FoundMember& a, const FoundMember& b) { return a.header < b.header; });
  std::vector<SampleMember> out;
  for (FoundMember& f : found) out.push_back(std::move(f.member));
  return out;
}

// One member opened and checked: its type, and its bytes against the file's size.
struct MemberDataset {
  Hid dset, type;
  uint64_t bytes = 0;
};

Result<MemberDataset> OpenMemberDataset(Hdf5Call& call, hid_t group, const std::string& what,
                                        const std::string& member, uint64_t file_size) {
  MemberDataset m;
  m.dset = Hid(H5Dopen2(group, member.c_str(), H5P_DEFAULT));
  if (!m.dset.valid()) {
    return call.Error(StatusCode::kCorruption,
                      what + " has no dataset " + member + " (dataset.hdf5_sample_members)");
  }
  const std::string where = what + "/" + member;
  Hid dcpl(H5Dget_create_plist(m.dset.get()));
  if (!dcpl.valid()) return call.Error(StatusCode::kCorruption, where + ": creation properties");
  DLIO_RETURN_NOT_OK(CheckFiltersAvailable(dcpl.get(), where));
  DLIO_RETURN_NOT_OK(CheckDataset(m.dset.get(), where, file_size, dcpl.get()));
  m.type = Hid(H5Dget_type(m.dset.get()));
  if (!m.type.valid()) return call.Error(StatusCode::kCorruption, where + ": type");
  if (H5Tdetect_class(m.type.get(), H5T_VLEN) > 0 || H5Tis_variable_str(m.type.get()) > 0) {
    return Status::Unimplemented(where, " has a variable-length type (", DtypeString(m.type.get()),
                                 ")");
  }
  Extent e = DatasetExtent(m.dset.get());
  if (e.rank < 0 || !DeclaredBytes(e, H5Tget_size(m.type.get()), &m.bytes)) {
    return Status::Corruption(where, ": dataspace of more than 2^62 bytes");
  }
  return m;
}

// Thread safety: every call holds the process-wide HDF5 lock, which also guards the open file.
class GroupReader final : public FormatReader {
 public:
  // `lookup`: the table read a row of with each sample ("" none), checked at its first read,
  // before the sample's datasets when `lookup_first` (reader.hdf5_lookup_order), else after;
  // `read_attributes`: the root's attributes read after it (reader.h5py_read_attributes).
  GroupReader(Hid fapl, Hid file, ReaderInfo info, bool reopen_file, bool read_attributes,
              std::string lookup, bool lookup_first)
      : fapl_(std::move(fapl)),
        file_(std::move(file)),
        info_(std::move(info)),
        reopen_file_(reopen_file),
        read_attributes_(read_attributes),
        lookup_first_(lookup_first),
        lookup_name_(std::move(lookup)) {}
  ~GroupReader() override {
    Hdf5Call call;
    lookup_.reset();
    file_.Reset();
    fapl_.Reset();
  }

  uint64_t num_samples() const override { return info_.num_samples; }
  // Nominal: /<prefix>0's first member's bytes when the layout was found in the file, else
  // dataset.record_length_bytes; a read gives the sample its own member's size.
  uint64_t sample_size(uint64_t i) const override {
    return i < info_.num_samples ? info_.row_bytes : 0;
  }

  Status ReadSample(uint64_t i, SampleBuffer* out) override {
    DLIO_RETURN_NOT_OK(CheckSampleIndex(info_.path, i, info_.num_samples));
    Hdf5Call call;
    if (!file_.valid()) {  // h5py.File(path) again (reader.h5py_reopen file)
      file_ = Hid(H5Fopen(info_.path.c_str(), H5F_ACC_RDONLY, fapl_.get()));
      if (!file_.valid()) {
        return call.Error(StatusCode::kCorruption, info_.path + ": not a readable HDF5 file");
      }
    }
    const bool lookup = !lookup_name_.empty();
    Status st = lookup && lookup_first_ ? ReadLookupRow(call, i) : Status::OK();
    if (st.ok()) {
      st = info_.groups.members.empty() ? ReadOwnDataset(call, i, out) : ReadGroup(call, i, out);
    }
    if (st.ok() && lookup && !lookup_first_) st = ReadLookupRow(call, i);
    if (st.ok() && read_attributes_) st = ReadRootAttributes(call, file_.get(), info_.path);
    if (reopen_file_) file_.Reset();
    return st;
  }

  // dict(f.attrs) of a file opened to learn about it, under reader.h5py_read_attributes (the
  // reader is fresh from its open: file_ is open).
  Status ReadOpenedFileFacts() override {
    if (!read_attributes_ || !file_.valid()) return Status::OK();
    Hdf5Call call;
    return ReadRootAttributes(call, file_.get(), info_.path);
  }

  std::string DescribeJson() const override {
    const SampleGroups& g = info_.groups;
    const std::string members = SampleMembersText(g.members);
    // The key's value as YAML takes it: a name starting with '{' quoted (else a flow mapping).
    const std::string text = GroupNamesText(g.names);
    const std::string value = text.front() == '{' ? "\"" + text + "\"" : text;
    std::string j =
        StrCat("{\"layout\":\"sample_groups\",\"groups\":", JsonString("/" + text),
               ",\"members\":", JsonString(members), ",\"lookup\":", JsonString(lookup_name_),
               ",\"samples\":", info_.num_samples, ",\"sample_bytes\":", info_.row_bytes,
               ",\"file_size\":", info_.file_size,
               ",\"writer_keys\":{\"dataset.hdf5_sample_groups\":", JsonString(value),
               ",\"dataset.hdf5_sample_members\":", JsonString(members));
    if (lookup_) {  // checked (at open when found); dlio's writer names its table /lookup
      j += StrCat(",\"dataset.hdf5_lookup_rows\":\"", lookup_->dims[0],
                  "\",\"dataset.hdf5_lookup_row_bytes\":\"", lookup_->row_bytes,
                  "\",\"reader.hdf5_lookup_dataset\":\"/lookup\"");
    }
    if (!element_.empty()) {
      j += ",\"dataset.record_dims\":" + JsonString(JsonDims(info_.dims.data(), info_.rank)) +
           ",\"dataset.record_element_type\":" + JsonString(element_);
    }
    return j + "}" + AttributesJson() + "}";
  }

  // The root's attributes as inspect gives them (RootAttributesJson), through the open file or
  // one opened for it (reader.h5py_reopen file closes it after each sample).
  std::string AttributesJson() const {
    Hdf5Call call;
    Hid opened;
    if (!file_.valid()) opened = Hid(H5Fopen(info_.path.c_str(), H5F_ACC_RDONLY, fapl_.get()));
    const hid_t file = file_.valid() ? file_.get() : opened.get();
    if (file < 0) {
      call.Clear();
      return "";
    }
    return RootAttributesJson(call, file, info_);
  }

  // Sample 0's first member (or own dataset): the nominal size of a sample, and its shape for
  // DescribeJson; and the lookup table's checks.
  Status LearnSampleShape(Hdf5Call& call) {
    if (info_.num_samples == 0) return Status::OK();
    const std::string name = SampleGroupPath(info_.groups.names, 0);
    const std::string what = info_.path + ": " + name;
    MemberDataset m;
    if (info_.groups.members.empty()) {
      DLIO_ASSIGN_OR_RETURN(m, OpenMemberDataset(call, file_.get(), info_.path + ":",
                                                 name.substr(1), info_.file_size));
    } else {
      Hid group(H5Gopen2(file_.get(), name.c_str(), H5P_DEFAULT));
      if (!group.valid()) {
        return call.Error(StatusCode::kCorruption,
                          what + ": no such group (dataset.hdf5_sample_groups)");
      }
      DLIO_ASSIGN_OR_RETURN(m, OpenMemberDataset(call, group.get(), what,
                                                 info_.groups.members[0].name, info_.file_size));
    }
    if (!lookup_name_.empty()) {
      DLIO_ASSIGN_OR_RETURN(lookup_, OpenLookupTable(call, file_.get(), info_, lookup_name_));
      lookup_row_.assign(static_cast<size_t>(std::max<uint64_t>(lookup_->row_bytes, 1)), 0);
    }
    info_.row_bytes = m.bytes;
    const Extent e = DatasetExtent(m.dset.get());
    info_.rank = e.rank;
    info_.dims = e.dims;
    element_ = e.rank > 0 ? ElementName(m.type.get()) : "";
    return Status::OK();
  }

 private:
  // `x = f['<prefix><i>'][()]`: the sample's own dataset, opened by name, read whole, closed.
  Status ReadOwnDataset(Hdf5Call& call, uint64_t i, SampleBuffer* out) {
    const std::string name = SampleGroupPath(info_.groups.names, i);
    DLIO_ASSIGN_OR_RETURN(MemberDataset m, OpenMemberDataset(call, file_.get(),
                                                             StrCat(info_.path, ": sample ", i,
                                                                    " of ", info_.num_samples, ":"),
                                                             name.substr(1), info_.file_size));
    DLIO_RETURN_NOT_OK(out->Resize(m.bytes));
    if (m.bytes > 0 &&
        H5Dread(m.dset.get(), m.type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, out->data()) < 0) {
      return call.Error(StatusCode::kCorruption, info_.path + ": reading " + name);
    }
    return Status::OK();
  }

  // `f['labels'][i]` after the sample: the table opened by name, a row read, closed. The first
  // read checks the table (h5py's first f['labels'] reads its header then, not at open).
  Status ReadLookupRow(Hdf5Call& call, uint64_t i) {
    if (!lookup_) {
      DLIO_ASSIGN_OR_RETURN(lookup_, OpenLookupTable(call, file_.get(), info_, lookup_name_));
      lookup_row_.assign(static_cast<size_t>(std::max<uint64_t>(lookup_->row_bytes, 1)), 0);
    }
    Hid table(H5Dopen2(file_.get(), lookup_->name.c_str(), H5P_DEFAULT));
    if (!table.valid()) {
      return call.Error(StatusCode::kCorruption, info_.path + ": opening " + lookup_->name);
    }
    return ReadLookupTableRow(call, table.get(), i, info_, &*lookup_, lookup_row_.data());
  }

  Status ReadGroup(Hdf5Call& call, uint64_t i, SampleBuffer* out) {
    const std::string name = SampleGroupPath(info_.groups.names, i);
    const std::string what = info_.path + ": " + name;
    Hid group(H5Gopen2(file_.get(), name.c_str(), H5P_DEFAULT));
    if (!group.valid()) {
      return call.Error(StatusCode::kCorruption,
                        StrCat(what, ": no such group (sample ", i, " of ", info_.num_samples,
                               ", dataset.hdf5_sample_groups)"));
    }
    for (size_t k = 0; k < info_.groups.members.size(); ++k) {
      const std::string& member = info_.groups.members[k].name;
      DLIO_ASSIGN_OR_RETURN(MemberDataset m,
                            OpenMemberDataset(call, group.get(), what, member, info_.file_size));
      uint8_t* dst = nullptr;
      if (k == 0) {  // the sample: its size is its first member's (checked against the file)
        DLIO_RETURN_NOT_OK(out->Resize(m.bytes));
        dst = out->data();
      } else {
        if (m.bytes > kMaxLabelBytes) {
          return Status::Unimplemented(what, "/", member, " holds ", m.bytes,
                                       " bytes; a label member holds at most ", kMaxLabelBytes);
        }
        label_.resize(static_cast<size_t>(std::max<uint64_t>(m.bytes, 1)));
        dst = label_.data();
      }
      if (m.bytes > 0 &&
          H5Dread(m.dset.get(), m.type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, dst) < 0) {
        return call.Error(StatusCode::kCorruption, what + ": reading " + member);
      }
    }
    return Status::OK();
  }

  Hid fapl_, file_;
  ReaderInfo info_;
  const bool reopen_file_;
  const bool read_attributes_;
  const bool lookup_first_;        // the lookup row before the sample (reader.hdf5_lookup_order)
  const std::string lookup_name_;  // the table read a row of with each sample, or ""
  std::optional<LookupTable> lookup_;  // lookup_name_'s, once checked
  std::vector<uint8_t> lookup_row_;
  std::string element_;         // numpy name of the sample member's elements, "" when unknown
  std::vector<uint8_t> label_;  // a label member's bytes
};

}  // namespace

Result<bool> FindSampleGroups(Hdf5Call& call, hid_t file, ReaderInfo* info) {
  LinkNames links;
  if (H5Literate(file, H5_INDEX_NAME, H5_ITER_INC, nullptr, &CollectLink, &links) < 0) {
    call.Clear();
    return false;
  }
  if (links.too_many) return false;
  std::string lookup = LookupBeside(file, &links.names);
  call.Clear();
  GroupNames names;
  if (!IndexedNames(links.names, &names)) return false;
  Hid first(H5Oopen(file, SampleGroupPath(names, 0).c_str(), H5P_DEFAULT));
  const H5I_type_t kind = first.valid() ? H5Iget_type(first.get()) : H5I_BADID;
  std::vector<SampleMember> members;
  if (kind == H5I_GROUP) {
    members = GroupMembers(first.get());
    if (members.empty()) {
      call.Clear();
      return false;
    }
  } else if (kind != H5I_DATASET) {  // a dataset per sample: no members
    call.Clear();
    return false;
  }
  call.Clear();
  info->groups.on = true;
  info->groups.names = names;
  info->groups.members = std::move(members);
  info->groups.lookup = std::move(lookup);
  info->num_samples = links.names.size();
  return true;
}

Result<std::unique_ptr<FormatReader>> MakeGroupReader(Hdf5Call& call, Storage* storage,
                                                      IoModel model, const FormatOptions& o,
                                                      ReaderHandles h, ReaderInfo info) {
  const Hdf5Options& options = Hdf5Of(o.formats);
  const bool found = info.groups.on;
  if (!found) {  // declared by the config: the file is not read before the first sample
    info.row_bytes = o.record_length_bytes;
    DLIO_ASSIGN_OR_RETURN(info.groups.names, ParseGroupNames(options.sample_groups));
    DLIO_ASSIGN_OR_RETURN(info.groups.members, ParseSampleMembers(options.sample_members));
    info.groups.on = true;
    info.num_samples = o.samples_per_file;
    if (info.num_samples == 0) {  // counted: the root's symbol table is read
      H5G_info_t root{};
      if (H5Gget_info(h.file.get(), &root) < 0) {
        return call.Error(StatusCode::kCorruption, info.path + ": listing the root group");
      }
      info.num_samples = root.nlinks;
    }
  }
  FileOptions fo;
  fo.direct = o.direct;
  DLIO_ASSIGN_OR_RETURN(Hid fapl, MakeDlioFapl(call, storage, fo));
  const bool reopen = model == IoModel::kH5py && options.h5py_reopen == H5pyReopen::kFile;
  // reader.hdf5_lookup_dataset, else the table found beside the samples
  std::string lookup = options.lookup_dataset.empty() ? info.groups.lookup : options.lookup_dataset;
  const bool attributes = model == IoModel::kH5py && options.h5py_read_attributes;
  const bool lookup_first = LookupBeforeSample(options.lookup_order, true);
  auto reader = std::make_unique<GroupReader>(std::move(fapl), std::move(h.file), std::move(info),
                                              reopen, attributes, std::move(lookup), lookup_first);
  if (found) DLIO_RETURN_NOT_OK(reader->LearnSampleShape(call));
  h.Reset();
  return std::unique_ptr<FormatReader>(std::move(reader));
}

}  // namespace dlio::format_internal::hdf5
