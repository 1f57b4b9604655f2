#include "core/element_type.h"

#include <array>

namespace dlio {
namespace {

// Little-endian, as numpy writes on every host dlio runs on; 1-byte types have no byte order.
constexpr std::array<ElementType, 13> kTypes{{
    {"uint8", "|u1", 1},
    {"int8", "|i1", 1},
    {"bool", "|b1", 1},
    {"uint16", "<u2", 2},
    {"int16", "<i2", 2},
    {"float16", "<f2", 2},
    {"uint32", "<u4", 4},
    {"int32", "<i4", 4},
    {"float32", "<f4", 4},
    {"uint64", "<u8", 8},
    {"int64", "<i8", 8},
    {"float64", "<f8", 8},
    {"complex64", "<c8", 8},
}};

}  // namespace

const ElementType* FindElementType(std::string_view name) {
  for (const ElementType& t : kTypes) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

std::vector<std::string> ElementTypeNames() {
  std::vector<std::string> names;
  for (const ElementType& t : kTypes) names.emplace_back(t.name);
  return names;
}

Result<uint64_t> RecordShapeBytes(const std::vector<uint64_t>& dims, const std::string& type,
                                  const std::string& dims_key, const std::string& type_key) {
  const ElementType* t = FindElementType(type);
  if (t == nullptr) {
    std::string accepted;
    for (const ElementType& known : kTypes) {
      accepted += (accepted.empty() ? "" : ", ") + std::string(known.name);
    }
    return Status::InvalidArgument(type_key, ": '", type, "' is not one of ", accepted);
  }
  uint64_t bytes = t->itemsize;
  for (uint64_t d : dims) {
    if (d == 0) return Status::InvalidArgument(dims_key, ": every dimension must be >= 1, got 0");
    if (bytes > (uint64_t{1} << 40) / d) {
      return Status::InvalidArgument(dims_key, ": the record is larger than 1 TiB");
    }
    bytes *= d;
  }
  return bytes;
}

}  // namespace dlio
