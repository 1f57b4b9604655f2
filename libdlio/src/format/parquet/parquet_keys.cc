// The parquet format's config keys (dataset.parquet.*, the MLPerf Storage v3.0 configs' keys, and
// reader.pyarrow_read; docs/formats.md): declared here, beside the format, and parsed straight
// into its ParquetOptions in the config's DatasetConfig::formats. The config module compiles this
// file into its key table (config/sources.cmake), as it parses a config before any registry
// exists; the format's registry entry names these keys' prefixes (format/register.cc).
#include <algorithm>
#include <iterator>
#include <nlohmann/json.hpp>

#include "config/key_builders.h"
#include "config/parse_context.h"
#include "config/value_parse.h"
#include "format/parquet/parquet_options.h"

#define PARQUET_FIELD(T, member) DLIO_FORMAT_FIELD(ParquetOptions, T, member)

namespace dlio::config_internal {
namespace {

std::vector<ParquetColumnOptions>& ParquetColumnsOf(WorkloadConfig& c) {
  return c.dataset.formats.Get<ParquetOptions>().columns;
}

// One field of a column, as the MLPerf Storage v3.0 configs spell it.
Result<bool> ParseParquetColumnField(const ParseContext& ctx, const EntryField& f,
                                     ParquetColumnOptions* column) {
  if (f.name == "name" || f.name == "dtype") {
    if (!f.value.IsScalar()) return TypeError(ctx, f.at, "a string", f.value);
    (f.name == "name" ? column->name : column->dtype) = f.value.Scalar();
    return true;
  }
  if (f.name == "size") {
    if (!f.value.IsScalar() || !ParseUintText(f.value.Scalar(), false, false, &column->size)) {
      return TypeError(ctx, f.at, "an unsigned integer", f.value);
    }
    return true;
  }
  if (f.name == "read") {
    if (!f.value.IsScalar() || !ParseBoolText(f.value.Scalar(), &column->read)) {
      return TypeError(ctx, f.at, "a boolean", f.value);
    }
    return true;
  }
  return false;
}

Status ParseParquetColumns(const ParseContext& ctx, const std::string& key, const YAML::Node& node,
                           WorkloadConfig* config) {
  DLIO_ASSIGN_OR_RETURN(
      ParquetColumnsOf(*config),
      ParseMapList<ParquetColumnOptions>(
          ctx, key, node, "a list of columns such as [{name: x, dtype: float32, size: 4}]",
          "name, dtype, size, read", "parquet column", &ParseParquetColumnField));
  return Status::OK();
}

// Each column: a name used once, a dtype the parquet format writes, a size of at least 1.
std::string CheckParquetColumns(const std::string& path, WorkloadConfig& config) {
  static const char* const kDtypes[] = {"uint8",   "uint16", "uint32", "uint64",  "int8",
                                        "int16",   "int32",  "int64",  "float16", "float32",
                                        "float64", "binary", "string"};
  const std::vector<ParquetColumnOptions>& cols = ParquetColumnsOf(config);
  for (size_t i = 0; i < cols.size(); ++i) {
    const ParquetColumnOptions& col = cols[i];
    const std::string key = StrCat(path, "[", i, "].");
    if (col.name.empty()) return key + "name must be given";
    for (size_t j = 0; j < i; ++j) {
      if (cols[j].name == col.name) return key + "name: '" + col.name + "' repeats";
    }
    if (std::find(std::begin(kDtypes), std::end(kDtypes), col.dtype) == std::end(kDtypes)) {
      return key + "dtype: '" + col.dtype +
             "' is not one of uint8/16/32/64, int8/16/32/64, float16/32/64, binary, string";
    }
    if (col.size < 1) return key + "size must be at least 1";
  }
  return "";
}

std::string RenderParquetColumns(WorkloadConfig& config) {
  std::string out = "[";
  for (const ParquetColumnOptions& c : ParquetColumnsOf(config)) {
    out += StrCat(out.size() > 1 ? ", " : "", "{name: ", c.name, ", dtype: ", c.dtype,
                  ", size: ", c.size, ", read: ", c.read ? "true" : "false", "}");
  }
  return out + "]";
}

void ParquetColumnsJson(WorkloadConfig& config, nlohmann::ordered_json* out) {
  for (const ParquetColumnOptions& col : ParquetColumnsOf(config)) {
    out->push_back(nlohmann::ordered_json{
        {"name", col.name}, {"dtype", col.dtype}, {"size", col.size}, {"read", col.read}});
  }
}

}  // namespace

void AddParquetKeys(std::vector<KeySpec>* t) {
  auto add = [t](KeySpec k) { t->push_back(std::move(k)); };
  add(Uint("dataset.parquet.row_group_size", PARQUET_FIELD(uint64_t, row_group_size),
           {1, uint64_t{1} << 31}, "parquet: rows per row group of generated files"));
  add(MapList(
      "dataset.parquet.columns",
      {&ParseParquetColumns, &CheckParquetColumns, &RenderParquetColumns, &ParquetColumnsJson},
      "parquet: the columns, a list of {name, dtype (uint8..uint64, int8..int64, "
      "float16/32/64, binary, string; default float32), size (values per row, "
      "default 1; > 1 is a fixed-size list), read (default true: readers read "
      "the column's chunks)}; empty: one column 'data' of the sample's bytes"));
  add(Choice("dataset.parquet.read_mode", PARQUET_FIELD(std::string, read_mode),
             {"default", "row_group"},
             "parquet: default or row_group; both read a sample's whole row group (the selected "
             "columns' chunks) and keep the last 4 decoded row groups per open file"));
  add(String("dataset.parquet.partition_by", PARQUET_FIELD(std::string, partition_by),
             "parquet: hive partitioning column; only empty (none) is supported"));
  add(Uint("dataset.parquet.generation_batch_size", PARQUET_FIELD(uint64_t, generation_batch_size),
           "parquet: the Python generator's rows per write batch (0 = row_group_size); each batch "
           "starts new row groups, as the fork's write_table calls do, so row groups end at batch "
           "boundaries too"));
  add(Bool(
      "dataset.parquet.use_dictionary", PARQUET_FIELD(bool, use_dictionary),
      "parquet (dlio only, pyarrow's use_dictionary): true dictionary-encodes each scalar column's "
      "chunks, falling back to PLAIN after the write batch that takes the dictionary to 1 MiB, as "
      "pyarrow's default (list columns stay PLAIN); false writes PLAIN pages only"));
}

void AddParquetReaderKeys(std::vector<KeySpec>* t) {
  t->push_back(Enum("reader.pyarrow_read",
                    DLIO_FORMAT_ENUM_FIELD(ParquetOptions, PyarrowRead, pyarrow_read),
                    "io_model pyarrow: how a row group is read after pyarrow's footer reads: fork "
                    "= one Python buffered read of the selected chunks' span (the MLPerf fork's "
                    "file reader); columns = one read per selected chunk "
                    "(ParquetFile.read_row_group); pre_buffer = those chunks coalesced (holes <= "
                    "8 KiB, ranges <= 32 MiB)"));
}

// dataset.parquet.partition_by: no format reads hive-partitioned datasets. What format parquet
// needs of dataset.compression and dataset.parquet.columns is asked of its registry entry
// (ValidateCapabilities runs its validate hook).
Status ValidateParquetKeys(const WorkloadConfig& c) {
  const ParquetOptions* set = c.dataset.formats.Find<ParquetOptions>();
  if (set != nullptr && !set->partition_by.empty()) {
    return Status::InvalidArgument("dataset.parquet.partition_by '", set->partition_by,
                                   "': hive-partitioned parquet datasets are not supported");
  }
  return Status::OK();
}

}  // namespace dlio::config_internal

#undef PARQUET_FIELD
