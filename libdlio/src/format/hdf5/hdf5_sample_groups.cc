// The group-per-sample layout's names and config checks (hdf5_sample_groups.h).
#include "format/hdf5/hdf5_sample_groups.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "config/config_table.h"
#include "dlio/str_cat.h"
#include "format/hdf5/hdf5_options.h"

namespace dlio::format_internal::hdf5 {
namespace {

constexpr size_t kMaxSampleMembers = 16;
constexpr size_t kMaxMemberName = 64;

bool MemberChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
}

// What the group layout does not write, as the key that asks for it; "" when none.
std::string RefusedBeside(const WorkloadConfig& c, const Hdf5Options& o) {
  const std::string codec = c.dataset.compression;
  if (!codec.empty() && codec != "none") return "dataset.compression " + codec;
  if (o.enable_chunking) return "dataset.enable_chunking";
  if (o.shuffle_filter) return "dataset.hdf5_shuffle";
  if (o.metadata_file) return "dataset.metadata_file";
  if (o.num_dsets > 1) return "dataset.hdf5.num_dset_per_record";
  return "";
}

}  // namespace

namespace {

using h5py_save::H5pyType;

// The numpy names H5pyTypeOf and ElementTypeName map.
constexpr std::pair<const char*, H5pyType> kMemberTypes[] = {
    {"uint8", H5pyType::kU8},    {"int8", H5pyType::kI8},    {"int16", H5pyType::kI16},
    {"int32", H5pyType::kI32},   {"int64", H5pyType::kI64},  {"float16", H5pyType::kF16},
    {"float32", H5pyType::kF32}, {"float64", H5pyType::kF64}};

// ":shape[:dtype]" of a member after the first (`spec`, without its name).
Status ParseMemberSpec(const std::string& spec, const std::string& item, SampleMember* m) {
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument("dataset.hdf5_sample_members: \"", item, "\" ", why);
  };
  const size_t colon = spec.find(':');
  const std::string shape = spec.substr(0, colon);
  if (shape != "scalar" && !shape.empty()) {
    size_t start = 0;
    while (start <= shape.size()) {
      const size_t x = std::min(shape.find('x', start), shape.size());
      uint64_t dim = 0;
      const char* first = shape.data() + start;
      const char* last = shape.data() + x;
      const auto [end, ec] = std::from_chars(first, last, dim);
      if (first == last || ec != std::errc() || end != last || dim > (uint64_t{1} << 32)) {
        return bad("has a shape that is not 'scalar' or dimensions like '4' or '2x3'");
      }
      m->shape.push_back(dim);
      start = x + 1;
    }
  }
  if (colon != std::string::npos && !H5pyTypeOf(spec.substr(colon + 1), &m->type)) {
    return bad(
        "has a dtype that is not uint8, int8, int16, int32, int64, float16, float32 or "
        "float64");
  }
  return Status::OK();
}

}  // namespace

Result<std::vector<SampleMember>> ParseSampleMembers(const std::string& members) {
  std::vector<SampleMember> out;
  if (members.empty()) return out;  // each sample is a dataset of its own, at the group's path
  size_t start = 0;
  while (start <= members.size()) {
    const size_t comma = std::min(members.find(',', start), members.size());
    const std::string item = members.substr(start, comma - start);
    start = comma + 1;
    SampleMember m;
    const size_t colon = item.find(':');
    m.name = item.substr(0, colon);
    if (m.name.empty() || m.name.size() > kMaxMemberName || m.name == "." || m.name == ".." ||
        !std::all_of(m.name.begin(), m.name.end(), MemberChar)) {
      return Status::InvalidArgument("dataset.hdf5_sample_members: \"", item, "\" in \"", members,
                                     "\" is not a dataset name (1 to 64 letters, digits, '_', '-' "
                                     "or '.', comma-separated)");
    }
    if (colon != std::string::npos) {
      if (out.empty()) {
        return Status::InvalidArgument(
            "dataset.hdf5_sample_members: \"", item,
            "\": the first member is the sample, its shape and dtype dataset.record_dims and "
            "record_element_type");
      }
      DLIO_RETURN_NOT_OK(ParseMemberSpec(item.substr(colon + 1), item, &m));
    }
    for (const SampleMember& seen : out) {
      if (seen.name == m.name) {
        return Status::InvalidArgument("dataset.hdf5_sample_members: \"", m.name,
                                       "\" is named twice in \"", members, "\"");
      }
    }
    out.push_back(std::move(m));
  }
  if (out.size() > kMaxSampleMembers) {
    return Status::InvalidArgument("dataset.hdf5_sample_members: ", out.size(), " names in \"",
                                   members, "\"; at most ", kMaxSampleMembers);
  }
  return out;
}

std::string SampleMembersText(const std::vector<SampleMember>& members) {
  std::string text;
  for (size_t k = 0; k < members.size(); ++k) {
    const SampleMember& m = members[k];
    if (k > 0) text += ",";
    text += m.name;
    if (k == 0 || (m.shape.empty() && m.type == H5pyType::kI64)) continue;
    std::string shape;
    for (uint64_t d : m.shape) shape.append(shape.empty() ? "" : "x").append(std::to_string(d));
    text.append(":").append(shape.empty() ? std::string("scalar") : shape);
    text.append(":").append(ElementTypeName(m.type));
  }
  return text;
}

std::string ElementTypeName(H5pyType type) {
  for (const auto& [name, t] : kMemberTypes) {
    if (t == type) return name;
  }
  return "";
}

Result<GroupNames> ParseGroupNames(const std::string& pattern) {
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument("dataset.hdf5_sample_groups: \"", pattern, "\" ", why);
  };
  GroupNames names;
  const size_t open = pattern.find('{');
  if (open == std::string::npos) {
    names.prefix = pattern;
  } else {
    const size_t close = pattern.find('}', open);
    if (close == std::string::npos) return bad("opens a '{' it does not close");
    const std::string field = pattern.substr(open + 1, close - open - 1);
    if (!field.empty()) {
      // ":0Nd": zero-padded to N digits.
      int width = 0;
      const bool digits = field.size() >= 4 && field.size() <= 5 &&
                          field.compare(0, 2, ":0") == 0 && field.back() == 'd' &&
                          std::all_of(field.begin() + 2, field.end() - 1,
                                      [](char c) { return c >= '0' && c <= '9'; });
      if (digits) width = std::stoi(field.substr(2, field.size() - 3));
      if (!digits || width < 1 || width > 20) {
        return bad("holds '{" + field + "}': the index is '{}' or '{:0Nd}' (N from 1 to 20)");
      }
      names.width = width;
    }
    names.prefix = pattern.substr(0, open);
    names.suffix = pattern.substr(close + 1);
  }
  const std::string rest = names.prefix + names.suffix;
  const bool bad_char = std::any_of(rest.begin(), rest.end(), [](char c) {
    return c == '/' || c == '{' || c == '}' || std::iscntrl(static_cast<unsigned char>(c));
  });
  if ((open == std::string::npos && rest.empty()) || rest.size() > kMaxMemberName || bad_char) {
    return bad(
        "is not a group name (one '{}' or '{:0Nd}' for the index, or a prefix; at most 64 "
        "other characters, no '/', '{', '}' or control characters)");
  }
  return names;
}

std::string GroupNamesText(const GroupNames& names) {
  if (names.width == 0 && names.suffix.empty() && !names.prefix.empty()) return names.prefix;
  const std::string field = names.width == 0 ? "{}" : StrCat("{:0", names.width, "d}");
  return names.prefix + field + names.suffix;
}

std::string SampleGroupPath(const GroupNames& names, uint64_t i) {
  std::string index = std::to_string(i);
  if (index.size() < static_cast<size_t>(names.width)) {
    index.insert(0, static_cast<size_t>(names.width) - index.size(), '0');
  }
  return StrCat("/", names.prefix, index, names.suffix);
}

bool H5pyTypeOf(const std::string& element_type, h5py_save::H5pyType* out) {
  for (const auto& [name, type] : kMemberTypes) {
    if (element_type == name) {
      *out = type;
      return true;
    }
  }
  return false;
}

Status ValidateHdf5Config(const WorkloadConfig& c) {
  DLIO_RETURN_NOT_OK(config_internal::ValidateHdf5CompressionRatio(c));
  const Hdf5Options& o = Hdf5Of(c.dataset.formats);
  if (!o.root_attributes.empty()) {
    DLIO_RETURN_NOT_OK(
        h5py_save::ParseRootAttributes(o.root_attributes, "dataset.hdf5_root_attributes").status());
  }
  if (o.sample_groups.empty()) return Status::OK();
  DLIO_RETURN_NOT_OK(ParseGroupNames(o.sample_groups).status());
  DLIO_RETURN_NOT_OK(ParseSampleMembers(o.sample_members).status());
  const std::string refused = RefusedBeside(c, o);
  if (!refused.empty()) {
    return Status::InvalidArgument("dataset.hdf5_sample_groups \"", o.sample_groups, "\" with ",
                                   refused,
                                   ": a group per sample holds contiguous datasets written as "
                                   "h5py writes them, one per member (unset one of the two)");
  }
  h5py_save::H5pyType type{};
  if (!c.dataset.record_dims.empty() && !H5pyTypeOf(c.dataset.record_element_type, &type)) {
    return Status::InvalidArgument(
        "dataset.record_element_type ", c.dataset.record_element_type,
        " with dataset.hdf5_sample_groups: the group layout writes uint8, int8, int16, int32, "
        "int64, float16, float32 or float64 arrays");
  }
  return Status::OK();
}

}  // namespace dlio::format_internal::hdf5
