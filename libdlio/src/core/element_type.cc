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

}  // namespace dlio
