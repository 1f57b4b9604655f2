#include "format/parquet/parquet_schema.h"

#include <cstring>
#include <set>

#include "format/content.h"

namespace dlio::format_internal::parquet {
namespace {

// ConvertedType values (parquet.thrift) of the integer types and UTF8.
constexpr int32_t kUtf8 = 0;
constexpr int32_t kUint8 = 11;
constexpr int32_t kInt8 = 15;

struct Dtype {
  const char* name;
  int bits;       // integers: width; floats: width; 0: byte array
  bool is_float;  // float16/32/64
  bool is_signed;
};
constexpr Dtype kDtypes[] = {
    {"uint8", 8, false, false},   {"uint16", 16, false, false}, {"uint32", 32, false, false},
    {"uint64", 64, false, false}, {"int8", 8, false, true},     {"int16", 16, false, true},
    {"int32", 32, false, true},   {"int64", 64, false, true},   {"float16", 16, true, true},
    {"float32", 32, true, true},  {"float64", 64, true, true},  {"binary", 0, false, false},
    {"string", 0, false, false},
};

const Dtype* FindDtype(const std::string& name) {
  for (const Dtype& d : kDtypes) {
    if (name == d.name) return &d;
  }
  return nullptr;
}

int Log2Bits(int bits) { return bits == 8 ? 0 : bits == 16 ? 1 : bits == 32 ? 2 : 3; }

// A scalar column of dtype d.
void ScalarElement(const Dtype& d, ColumnLayout* c) {
  SchemaElement& e = c->element;
  if (d.bits == 0) {
    e.type = kByteArray;
    if (std::string(d.name) == "string") {
      e.converted_type = kUtf8;
      c->kind = ValueKind::kLetters;
    }
    return;
  }
  if (d.is_float) {
    if (d.bits == 16) {
      e.type = kFixedLenByteArray;
      e.type_length = 2;
      e.logical = kLogicalFloat16;
      c->kind = ValueKind::kHalf;
    } else {
      e.type = d.bits == 32 ? kFloat : kDouble;
      c->kind = d.bits == 32 ? ValueKind::kFloat : ValueKind::kDouble;
    }
    c->width = d.bits / 8;
    return;
  }
  e.type = d.bits == 64 ? kInt64 : kInt32;
  e.logical = kLogicalInteger;
  e.int_bits = static_cast<int8_t>(d.bits);
  e.int_signed = d.is_signed;
  e.converted_type = (d.is_signed ? kInt8 : kUint8) + Log2Bits(d.bits);
  c->width = d.bits == 64 ? 8 : 4;
  if (d.bits < 32) {
    c->kind = ValueKind::kSmallInt;
    c->small_int_bytes = d.bits / 8;
  }
}

Status ColumnError(size_t i, const std::string& what) {
  return Status::InvalidArgument("dataset.parquet.columns[", i, "]: ", what);
}

Result<ColumnLayout> ConfiguredColumn(const ParquetColumnOptions& o, size_t i) {
  const Dtype* d = FindDtype(o.dtype);
  if (d == nullptr) {
    return ColumnError(i, "dtype '" + o.dtype +
                              "' is not supported (uint8/16/32/64, int8/16/32/64, "
                              "float16/32/64, binary, string)");
  }
  if (o.size == 0) return ColumnError(i, "size must be at least 1");
  ColumnLayout c;
  c.name = o.name;
  c.dtype = o.dtype;
  c.read = o.read;
  c.element.name = o.name;
  c.element.repetition = kRequired;
  if (d->bits == 0) {  // byte arrays of `size` bytes each
    ScalarElement(*d, &c);
    c.value_size = o.size;
  } else if (o.size == 1) {
    ScalarElement(*d, &c);
  } else {  // a fixed-size list: its values' bytes as one fixed_len_byte_array
    c.element.type = kFixedLenByteArray;
    c.list_values = o.size;
    c.width = o.size * static_cast<uint64_t>(d->bits / 8);
    if (c.width > INT32_MAX) return ColumnError(i, "size x dtype width exceeds 2 GiB");
    c.element.type_length = static_cast<int32_t>(c.width);
  }
  return c;
}

}  // namespace

Result<std::vector<ColumnLayout>> WriterLayout(const ParquetOptions& options,
                                               uint64_t sample_size) {
  std::vector<ColumnLayout> out;
  if (options.columns.empty()) {
    ColumnLayout c;
    c.name = c.element.name = "data";
    c.dtype = "uint8";
    c.element.repetition = kRequired;
    c.list_values = sample_size;
    if (sample_size == 0 || sample_size > INT32_MAX) {
      c.element.type = kByteArray;
      c.value_size = sample_size;
    } else {
      c.element.type = kFixedLenByteArray;
      c.element.type_length = static_cast<int32_t>(sample_size);
      c.width = sample_size;
    }
    out.push_back(std::move(c));
    return out;
  }
  std::set<std::string> names;
  for (size_t i = 0; i < options.columns.size(); ++i) {
    const ParquetColumnOptions& o = options.columns[i];
    if (o.name.empty()) return ColumnError(i, "name is empty");
    if (!names.insert(o.name).second) return ColumnError(i, "name '" + o.name + "' repeats");
    DLIO_ASSIGN_OR_RETURN(ColumnLayout c, ConfiguredColumn(o, i));
    out.push_back(std::move(c));
  }
  return out;
}

Result<std::vector<ColumnLayout>> FileLayout(const FileMetaData& m, const std::string& path) {
  const SchemaElement& root = m.schema[0];
  if (root.num_children < 0 || static_cast<size_t>(root.num_children) != m.schema.size() - 1) {
    return Status::Unimplemented(path, ": schema root '", root.name, "' has ", root.num_children,
                                 " children in a schema of ", m.schema.size() - 1,
                                 " elements: nested columns are not supported");
  }
  std::vector<ColumnLayout> out;
  for (size_t i = 1; i < m.schema.size(); ++i) {
    const SchemaElement& e = m.schema[i];
    if (e.type < 0 || e.num_children > 0 ||
        (e.repetition != kRequired && e.repetition != kOptional)) {
      return Status::Unimplemented(path, ": column '", e.name,
                                   "' is nested or repeated (only flat columns are supported)");
    }
    ColumnLayout c;
    c.name = e.name;
    c.element = e;
    switch (e.type) {
      case kBoolean:  // one byte a value, 0 or 1
        c.width = 1;
        break;
      case kInt32:
      case kFloat:
        c.width = 4;
        break;
      case kInt64:
      case kDouble:
        c.width = 8;
        break;
      case kInt96:
        c.width = 12;
        break;
      case kByteArray:
        c.width = 0;
        break;
      case kFixedLenByteArray:
        if (e.type_length <= 0) {
          return Status::Corruption(path, ": column '", e.name, "' has type_length ",
                                    e.type_length);
        }
        c.width = static_cast<uint64_t>(e.type_length);
        break;
      default:
        return Status::Unimplemented(path, ": column '", e.name, "' of type ",
                                     PhysicalTypeName(e.type), " is not supported");
    }
    out.push_back(std::move(c));
  }
  return out;
}

void FillColumnValue(const ColumnLayout& c, uint64_t column, uint64_t seed, uint64_t row,
                     uint8_t* dst) {
  const uint64_t n = c.width != 0 ? c.width : c.value_size;
  const uint64_t col_seed = seed ^ ((column + 1) * 0x9e3779b97f4a7c15ull);
  FillSampleBytes(col_seed, row, 0, dst, n);
  switch (c.kind) {
    case ValueKind::kRaw:
      return;
    case ValueKind::kLetters:
      for (uint64_t k = 0; k < n; ++k) dst[k] = static_cast<uint8_t>('a' + dst[k] % 26);
      return;
    case ValueKind::kHalf:
      dst[1] &= 0x3b;  // sign 0, exponent below 15
      return;
    case ValueKind::kFloat: {
      uint32_t u;
      std::memcpy(&u, dst, 4);
      const float f = static_cast<float>(u >> 8) * (1.0f / 16777216.0f);
      std::memcpy(dst, &f, 4);
      return;
    }
    case ValueKind::kDouble: {
      uint64_t u;
      std::memcpy(&u, dst, 8);
      const double f = static_cast<double>(u >> 11) * (1.0 / 9007199254740992.0);
      std::memcpy(dst, &f, 8);
      return;
    }
    case ValueKind::kSmallInt: {
      const int bytes = c.small_int_bytes;
      const bool negative = c.element.int_signed && (dst[bytes - 1] & 0x80) != 0;
      for (int k = bytes; k < 4; ++k) dst[k] = negative ? 0xff : 0x00;
      return;
    }
  }
}

const char* PhysicalTypeName(int32_t type) {
  static const char* const kNames[] = {"BOOLEAN", "INT32",  "INT64",      "INT96",
                                       "FLOAT",   "DOUBLE", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"};
  return type >= 0 && type <= 7 ? kNames[type] : "unknown";
}

}  // namespace dlio::format_internal::parquet
