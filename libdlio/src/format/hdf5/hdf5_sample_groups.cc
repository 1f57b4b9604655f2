// The group-per-sample layout's names and config checks (hdf5_sample_groups.h).
#include "format/hdf5/hdf5_sample_groups.h"

#include <algorithm>
#include <cctype>

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
  if (o.lookup_rows > 0) return "dataset.hdf5_lookup_rows";
  if (o.num_dsets > 1) return "dataset.hdf5.num_dset_per_record";
  if (!o.lookup_dataset.empty()) return "reader.hdf5_lookup_dataset";
  return "";
}

}  // namespace

Result<std::vector<std::string>> ParseSampleMembers(const std::string& members) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= members.size()) {
    const size_t comma = std::min(members.find(',', start), members.size());
    std::string name = members.substr(start, comma - start);
    start = comma + 1;
    if (name.empty() || name.size() > kMaxMemberName || name == "." || name == ".." ||
        !std::all_of(name.begin(), name.end(), MemberChar)) {
      return Status::InvalidArgument("dataset.hdf5_sample_members: \"", name, "\" in \"", members,
                                     "\" is not a dataset name (1 to 64 letters, digits, '_', '-' "
                                     "or '.', comma-separated)");
    }
    if (std::find(out.begin(), out.end(), name) != out.end()) {
      return Status::InvalidArgument("dataset.hdf5_sample_members: \"", name,
                                     "\" is named twice in \"", members, "\"");
    }
    out.push_back(std::move(name));
  }
  if (out.size() > kMaxSampleMembers) {
    return Status::InvalidArgument("dataset.hdf5_sample_members: ", out.size(), " names in \"",
                                   members, "\"; at most ", kMaxSampleMembers);
  }
  return out;
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
  using h5py_save::H5pyType;
  static const std::pair<const char*, H5pyType> kTypes[] = {
      {"uint8", H5pyType::kU8},    {"int8", H5pyType::kI8},    {"int16", H5pyType::kI16},
      {"int32", H5pyType::kI32},   {"int64", H5pyType::kI64},  {"float16", H5pyType::kF16},
      {"float32", H5pyType::kF32}, {"float64", H5pyType::kF64}};
  for (const auto& [name, type] : kTypes) {
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
