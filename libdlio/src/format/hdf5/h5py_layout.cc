// checkpoint.h5py_datasets: the datasets h5py writes, parsed and checked (no HDF5 needed, so the
// key is judged in builds without it too).
#include <algorithm>
#include <cstring>
#include <iterator>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "format/hdf5/h5py_save.h"

namespace dlio::h5py_save {
namespace {

struct TypeName {
  const char* name;
  H5pyType type;
  uint64_t size;
};
constexpr TypeName kTypes[] = {
    {"fp16", H5pyType::kF16, 2},  {"fp32", H5pyType::kF32, 4},  {"fp64", H5pyType::kF64, 8},
    {"int8", H5pyType::kI8, 1},   {"uint8", H5pyType::kU8, 1},  {"int16", H5pyType::kI16, 2},
    {"int32", H5pyType::kI32, 4}, {"int64", H5pyType::kI64, 8},
};

}  // namespace

uint64_t ElementSize(H5pyType t) {
  for (const TypeName& n : kTypes) {
    if (n.type == t) return n.size;
  }
  return 0;
}

namespace {

std::string Trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t") - a + 1);
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t p; (p = s.find(sep, start)) != std::string::npos; start = p + 1) {
    out.push_back(Trim(s.substr(start, p - start)));
  }
  out.push_back(Trim(s.substr(start)));
  return out;
}

// `zero`: dimensions of 0 are taken (an attribute's; a dataset of no elements has no data).
Result<std::vector<uint64_t>> ParseShape(const char* key, const std::string& item,
                                         const std::string& text, bool zero) {
  std::vector<uint64_t> shape;
  if (text.empty() || text == "scalar") return shape;
  uint64_t elements = 1;
  for (const std::string& d : Split(text, 'x')) {
    if (d.empty() || d.size() > 12 || d.find_first_not_of("0123456789") != std::string::npos ||
        (!zero && std::stoull(d) == 0)) {
      return Status::InvalidArgument(key, ": '", item, "': shape '", text,
                                     "' is not dimensions of ", zero ? 0 : 1,
                                     " or more joined by 'x' (e.g. 3x3x32)");
    }
    shape.push_back(std::stoull(d));
    elements *= shape.back();
    if (elements > (uint64_t{1} << 40)) {
      return Status::InvalidArgument(key, ": '", item, "': shape '", text,
                                     "' holds more than 2^40 elements");
    }
  }
  return shape;
}

// A dtype: one of kTypes, or (`strings`: an attribute's) S<n>, a string of n bytes.
Result<H5pyType> ParseType(const char* key, const std::string& item, const std::string& text,
                           bool strings, uint64_t* string_size) {
  if (text.empty()) return H5pyType::kF32;
  for (const TypeName& n : kTypes) {
    if (text == n.name) return n.type;
  }
  if (strings) {
    for (const auto& [prefix, type] : {std::pair<const char*, H5pyType>{"S", H5pyType::kStr},
                                       {"bytes", H5pyType::kVBytes},
                                       {"str", H5pyType::kVStr}}) {
      const std::string digits = text.substr(std::min(text.size(), std::strlen(prefix)));
      if (text.rfind(prefix, 0) == 0 && !digits.empty() && digits.size() <= 5 &&
          digits.find_first_not_of("0123456789") == std::string::npos && std::stoull(digits) > 0) {
        *string_size = std::stoull(digits);
        return type;
      }
    }
  }
  return Status::InvalidArgument(key, ": '", item, "': dtype '", text,
                                 "' is not one of fp16, fp32, fp64, int8, uint8, int16, int32, "
                                 "int64",
                                 strings ? ", S<n> (1 to 99999 bytes)" : "",
                                 " (h5py stores no bfloat16; bool is not emulated)");
}

// A path of names joined by single '/' (`root`: "" too, the root's).
Status CheckName(const char* key, const std::string& item, const std::string& name, bool root) {
  if ((name.empty() && !root) || (!name.empty() && (name.front() == '/' || name.back() == '/')) ||
      name.find("//") != std::string::npos || name == "." ||
      name.find("/./") != std::string::npos) {
    return Status::InvalidArgument(key, ": '", item, "': '", name,
                                   "' is not a dataset path (names joined by single '/', none "
                                   "empty, no leading or trailing '/')");
  }
  return Status::OK();
}

// Whether `t` reads as a shape: dimensions joined by 'x', 'scalar' or nothing.
bool ShapeLike(const std::string& t) {
  return t.empty() || t == "scalar" || t.find_first_not_of("0123456789x") == std::string::npos;
}

bool StringTypeLike(const std::string& t) {
  for (const char* prefix : {"S", "bytes", "str"}) {
    const size_t n = std::strlen(prefix);
    if (t.size() > n && t.rfind(prefix, 0) == 0 &&
        t.find_first_not_of("0123456789", n) == std::string::npos) {
      return true;
    }
  }
  return false;
}

bool TypeLike(const std::string& t) {
  return std::any_of(std::begin(kTypes), std::end(kTypes),
                     [&](const TypeName& n) { return t == n.name; });
}

// One "name:shape[:dtype]" item, read from the right, as a name may hold ':' (Keras' "kernel:0"):
// the last field is the dtype when it names one (or, after two or more, does not read as a shape:
// a bad dtype), the field before it the shape, the rest the name.
Result<H5pyDataset> ParseItem(const char* key, const std::string& item) {
  std::vector<std::string> parts = Split(item, ':');
  if (parts.size() < 2) {
    return Status::InvalidArgument(key, ": '", item, "' is not name:shape[:dtype]");
  }
  std::string dtype;
  if (parts.size() >= 3 &&
      (TypeLike(parts.back()) || StringTypeLike(parts.back()) || !ShapeLike(parts.back()))) {
    dtype = parts.back();
    parts.pop_back();
  }
  H5pyDataset d;
  const std::string shape = parts.back();
  parts.pop_back();
  for (size_t k = 0; k < parts.size(); ++k) d.name += (k == 0 ? "" : ":") + parts[k];
  const size_t at = d.name.rfind('@');
  if (at != std::string::npos) {
    d.attribute = d.name.substr(at + 1);
    d.name.resize(at);
    if (d.attribute.empty() || d.attribute.find('/') != std::string::npos) {
      return Status::InvalidArgument(key, ": '", item, "': '", d.attribute,
                                     "' is not an attribute name (not empty, no '/')");
    }
  }
  DLIO_RETURN_NOT_OK(CheckName(key, item, d.name, d.is_attribute()));
  DLIO_ASSIGN_OR_RETURN(d.shape, ParseShape(key, item, shape, d.is_attribute()));
  DLIO_ASSIGN_OR_RETURN(d.type, ParseType(key, item, dtype, d.is_attribute(), &d.string_size));
  return d;
}

// Each dataset's groups must not be another dataset, nor a dataset a group of another; each
// attribute's object is the root or a group, and holds it once.
Status CheckTree(const char* key, const H5pyLayout& layout) {
  std::set<std::string> datasets, groups, attributes;
  for (const H5pyDataset& d : layout.datasets) {
    if (d.is_attribute()) {
      if (!attributes.insert(d.name + "@" + d.attribute).second) {
        return Status::InvalidArgument(key, ": attribute '", d.attribute, "' of '", d.name,
                                       "' is given twice");
      }
      if (!d.name.empty()) groups.insert(d.name);
    } else if (!datasets.insert(d.name).second) {
      return Status::InvalidArgument(key, ": dataset '", d.name, "' is given twice");
    }
    const std::string& path = d.name;
    for (size_t p = path.find('/'); p != std::string::npos; p = path.find('/', p + 1)) {
      groups.insert(path.substr(0, p));
    }
  }
  for (const std::string& g : groups) {
    if (datasets.count(g) != 0) {
      return Status::InvalidArgument(key, ": '", g,
                                     "' is both a dataset and a group (of another dataset or of "
                                     "an attribute: attributes of datasets are not emulated)");
    }
  }
  return Status::OK();
}

}  // namespace

uint64_t H5pyDataset::bytes() const {
  uint64_t n = IsString(type) ? string_size : ElementSize(type);
  for (const uint64_t d : shape) n *= d;
  return n;
}

uint64_t H5pyLayout::data_bytes() const {
  uint64_t n = 0;
  for (const H5pyDataset& d : datasets) n += d.is_attribute() ? 0 : d.bytes();
  return n;
}

std::string ItemText(const H5pyDataset& d) {
  std::string text = d.name;
  if (d.is_attribute()) text.append("@").append(d.attribute);
  text.append(":");
  for (size_t k = 0; k < d.shape.size(); ++k) {
    text.append(k == 0 ? "" : "x").append(std::to_string(d.shape[k]));
  }
  if (d.shape.empty()) text.append("scalar");
  text.append(":");
  const char* prefix = d.type == H5pyType::kStr      ? "S"
                       : d.type == H5pyType::kVBytes ? "bytes"
                       : d.type == H5pyType::kVStr   ? "str"
                                                     : nullptr;
  if (prefix != nullptr) return text.append(prefix).append(std::to_string(d.string_size));
  for (const TypeName& n : kTypes) {
    if (n.type == d.type) text.append(n.name);
  }
  return text;
}

std::string ItemsText(const std::vector<H5pyDataset>& items, const char* separator) {
  std::string text;
  for (const H5pyDataset& d : items) {
    if (!text.empty()) text.append(separator);  // not (... ? "" : sep) + ...: GCC 12 -Wrestrict
    text.append(ItemText(d));
  }
  return text;
}

Result<H5pyLayout> ParseH5pyDatasets(const std::string& text, const char* key) {
  H5pyLayout layout;
  if (Trim(text).empty()) {
    return Status::InvalidArgument(key,
                                   " is empty: give the datasets h5py writes, as "
                                   "name:shape[:dtype] items (e.g. 'dense/kernel:784x10')");
  }
  for (const std::string& item : Split(text, ',')) {
    DLIO_ASSIGN_OR_RETURN(H5pyDataset d, ParseItem(key, item));
    layout.datasets.push_back(std::move(d));
  }
  DLIO_RETURN_NOT_OK(CheckTree(key, layout));
  return layout;
}

Result<std::vector<H5pyDataset>> ParseRootAttributes(const std::string& text, const char* key) {
  DLIO_ASSIGN_OR_RETURN(H5pyLayout layout, ParseH5pyDatasets(text, key));
  for (const H5pyDataset& d : layout.datasets) {
    if (!d.is_attribute() || !d.name.empty()) {
      return Status::InvalidArgument(key, ": '", ItemText(d),
                                     "' is not an attribute of the root: give "
                                     "'@name:shape:dtype' items (e.g. '@max:scalar:fp64')");
    }
  }
  return std::move(layout.datasets);
}

}  // namespace dlio::h5py_save
