// Parquet's footer and page-header structures (apache/parquet-format, parquet.thrift): the fields
// dlio writes and reads, encoded with the Thrift compact protocol. Unknown fields are skipped when
// decoding, as Thrift requires; fields dlio does not use are not kept.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dlio/status.h"

namespace dlio::format_internal::parquet {

inline constexpr char kMagic[] = "PAR1";
inline constexpr uint64_t kMagicBytes = 4;
inline constexpr uint64_t kTailBytes = 8;  // uint32 footer length + "PAR1"

// parquet.thrift enums (their numeric values are the format).
enum PhysicalType : int32_t {
  kBoolean = 0,
  kInt32 = 1,
  kInt64 = 2,
  kInt96 = 3,
  kFloat = 4,
  kDouble = 5,
  kByteArray = 6,
  kFixedLenByteArray = 7,
};
enum Repetition : int32_t { kRequired = 0, kOptional = 1, kRepeated = 2 };
enum Codec : int32_t {
  kUncompressed = 0,
  kSnappy = 1,
  kGzip = 2,
  kLz4 = 5,  // deprecated: LZ4 blocks in Hadoop's framing (read only)
  kZstd = 6,
  kLz4Raw = 7,  // read only
};
enum Encoding : int32_t {
  kPlain = 0,
  kPlainDictionary = 2,
  kRle = 3,
  kDeltaBinaryPacked = 5,
  kDeltaLengthByteArray = 6,
  kDeltaByteArray = 7,
  kRleDictionary = 8,
  kByteStreamSplit = 9,
};
enum PageType : int32_t { kDataPage = 0, kIndexPage = 1, kDictionaryPage = 2, kDataPageV2 = 3 };
// LogicalType union members dlio writes.
enum LogicalKind : int32_t { kNoLogical = 0, kLogicalInteger = 10, kLogicalFloat16 = 15 };

struct SchemaElement {
  int32_t type = -1;  // PhysicalType; -1 = absent (a group node)
  int32_t type_length = 0;
  int32_t repetition = -1;  // -1 = absent (the root)
  std::string name;
  int32_t num_children = 0;
  int32_t converted_type = -1;
  int32_t logical = kNoLogical;  // LogicalKind; other members are skipped
  int8_t int_bits = 0;           // LogicalType INTEGER
  bool int_signed = true;
};

struct ColumnMetaData {
  int32_t type = 0;
  std::vector<int32_t> encodings;
  std::vector<std::string> path;
  int32_t codec = kUncompressed;
  int64_t num_values = 0;
  int64_t total_uncompressed_size = 0;
  int64_t total_compressed_size = 0;
  int64_t data_page_offset = 0;
  int64_t dictionary_page_offset = -1;  // -1 = absent
};

struct ColumnChunk {
  int64_t file_offset = 0;
  bool has_meta = false;
  ColumnMetaData meta;
};

struct RowGroup {
  std::vector<ColumnChunk> columns;
  int64_t total_byte_size = 0;
  int64_t num_rows = 0;
};

struct FileMetaData {
  int32_t version = 1;
  std::vector<SchemaElement> schema;  // depth-first; schema[0] is the root
  int64_t num_rows = 0;
  std::vector<RowGroup> row_groups;
  std::string created_by;
};

struct PageHeader {
  int32_t type = kDataPage;
  int32_t uncompressed_size = 0;
  int32_t compressed_size = 0;
  // The data page header of its type (v1 and v2 share the fields dlio uses).
  int32_t num_values = 0;
  int32_t encoding = kPlain;
  bool has_data_header = false;
  // v2 only: level bytes (never compressed) before the values, and whether the values are.
  int32_t def_levels_bytes = 0;
  int32_t rep_levels_bytes = 0;
  int32_t num_nulls = 0;
  bool v2_compressed = true;
};

std::string EncodeFileMetaData(const FileMetaData& m);
// Decodes the footer bytes [data, data + n) found at file offset `base` of `path`. Corruption
// naming path and offset when they do not parse or a required field is missing.
Result<FileMetaData> DecodeFileMetaData(const uint8_t* data, size_t n, const std::string& path,
                                        uint64_t base);

std::string EncodePageHeader(const PageHeader& h);
// A page header at file offset `base`; *consumed gets its encoded length.
Result<PageHeader> DecodePageHeader(const uint8_t* data, size_t n, const std::string& path,
                                    uint64_t base, size_t* consumed);

}  // namespace dlio::format_internal::parquet
