// numpy element types by DLIO's names (dataset.record_element_type, reader.transformed_record_
// element_type): their npy descr and item size, for the record shapes of docs/formats.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dlio/status.h"

namespace dlio {

struct ElementType {
  std::string_view name;   // numpy's name: "float32"
  std::string_view descr;  // npy header descr: "<f4"
  uint64_t itemsize = 0;   // bytes
};

// The type named `name` (numpy's spelling, as np.dtype(name) takes it), or nullptr.
const ElementType* FindElementType(std::string_view name);

// Every accepted name, in the table's order.
std::vector<std::string> ElementTypeNames();

// The bytes of one record of `dims` elements of the type named `type` (DLIO's record shapes).
// InvalidArgument naming `type_key` for an unknown type, `dims_key` for a dimension of 0 or a
// record larger than 1 TiB.
Result<uint64_t> RecordShapeBytes(const std::vector<uint64_t>& dims, const std::string& type,
                                  const std::string& dims_key, const std::string& type_key);

}  // namespace dlio
