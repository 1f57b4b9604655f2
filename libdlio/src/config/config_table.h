// The one description of every config key: parsing and overrides, scale_keys, the single-key
// checks of Validate (types, ranges, accepted values), ConfigToJson, ConfigKeyDocs (`dlio-run list
// keys`) and docs/configuration.md all come from this table, so they cannot disagree. The rules
// between keys are not here: Validate checks them in config_validate.cc.
#pragma once

#include <cmath>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "dlio/cache_options.h"
#include "dlio/config.h"

namespace YAML {
class Node;
}  // namespace YAML

namespace dlio::config_internal {

struct ParseContext;

enum class KeyType {
  kBool,
  kUint,
  kInt,
  kDouble,
  kString,  // free text, or one of `accepted` when that is not empty (registry names dlio has)
  kEnum,    // a field of an enum type (config_enums.h); `accepted` holds its names in value order
  kDistribution,
  kDistributionStdev,  // DLIO's `<key>_stdev` sibling: turns a constant into normal(mean, stdev)
  kUintList,           // a list of unsigned integers ([1, 2, 3])
  kCacheTiers,         // storage.tiers: a list of maps {type, path, capacity_bytes, threads}
  kMapList,            // a list of maps the declaring implementation reads itself (MapListHooks)
  kAny,                // accepted, not used: any value (scalar, list or map) is fine
};

enum KeyFlags : uint32_t {
  kNone = 0,
  kSizeUnits = 1u << 0,      // also accepts "4MiB", "256KB", "1GB" (see docs/configuration.md)
  kRoundFraction = 1u << 1,  // a fractional value is rounded (DLIO configs carry 114660.07)
  kStripSlash = 1u << 2,     // trailing '/' removed, as DLIO does for folders
  kMinusOneOff = 1u << 3,    // kInt: -1 ("off") is accepted besides the range
  kMinExclusive = 1u << 4,   // kDouble: the minimum itself is not accepted
  kNonEmpty = 1u << 5,       // kString: must not be empty
  kSecret = 1u << 6,         // kString: ConfigToJson writes "<redacted>" for a value (credentials)
};

// Maps a DLIO spelling of a value onto dlio's and may set related fields; returns the final
// value to store. `note` receives an explanation to add to the warnings (optional).
using CustomSetter = std::string (*)(WorkloadConfig& config, const std::string& value,
                                     std::string* note);

// How a kMapList key's value is parsed, checked, rendered and exported: given by the
// implementation that declares the key beside its options type (dataset.parquet.columns,
// format/parquet/parquet_keys.cc), so the config module names no entry type.
struct MapListHooks {
  // Stores `node` (a list of maps; null: an empty list) into `config`; InvalidArgument naming the
  // entry's index and key ("dataset.parquet.columns[3].size") with the source and line.
  Status (*parse)(const ParseContext& ctx, const std::string& key, const YAML::Node& node,
                  WorkloadConfig* config) = nullptr;
  // "" when every entry is acceptable, else the problem naming the key `key` and the entry.
  std::string (*check)(const std::string& key, WorkloadConfig& config) = nullptr;
  // The value for docs and `dlio-run list keys` ("[{name: x, dtype: float32, ...}]").
  std::string (*render)(WorkloadConfig& config) = nullptr;
  // The value in config.json: an array of objects.
  void (*to_json)(WorkloadConfig& config, nlohmann::ordered_json* out) = nullptr;
};

struct KeySpec {
  std::string path;  // "dataset.num_files_train"
  KeyType type = KeyType::kAny;
  std::string description;
  std::vector<std::string> accepted;  // kEnum (all names) and closed kString keys
  uint32_t flags = kNone;
  std::string alias_of;  // non-empty: another spelling of that key (not emitted in JSON)
  // Accessors: the one matching `type` is set (none for kAny and aliases).
  bool& (*bool_ref)(WorkloadConfig&) = nullptr;
  uint64_t& (*uint_ref)(WorkloadConfig&) = nullptr;
  int64_t& (*int_ref)(WorkloadConfig&) = nullptr;
  int& (*int32_ref)(WorkloadConfig&) = nullptr;
  double& (*double_ref)(WorkloadConfig&) = nullptr;
  std::string& (*string_ref)(WorkloadConfig&) = nullptr;
  int (*enum_get)(WorkloadConfig&) = nullptr;  // kEnum: the value's index in `accepted`
  void (*enum_set)(WorkloadConfig&, int) = nullptr;
  DistributionSpec& (*dist_ref)(WorkloadConfig&) = nullptr;
  std::vector<uint64_t>& (*uint_list_ref)(WorkloadConfig&) = nullptr;
  std::vector<CacheTierOptions>& (*tiers_ref)(WorkloadConfig&) = nullptr;
  MapListHooks map_list;          // kMapList
  CustomSetter custom = nullptr;  // kString / kEnum only
  // Accepted ranges, checked when a value is parsed and by Validate (a value set from code).
  uint64_t uint_min = 0, uint_max = UINT64_MAX;          // kUint
  int64_t int_min = INT64_MIN, int_max = INT64_MAX;      // kInt (and kMinusOneOff)
  double double_min = -HUGE_VAL, double_max = HUGE_VAL;  // kDouble; kDistribution: max of every
                                                         // parameter (seconds)

  bool used() const { return type != KeyType::kAny; }
  bool emitted() const { return alias_of.empty() && used() && type != KeyType::kDistributionStdev; }
};

// Every key, grouped by section in documentation order. Built once; immutable.
const std::vector<KeySpec>& KeyTable();
// Append the sections' keys, in the table's order (config_table_<section>.cc).
void AddDatasetKeys(std::vector<KeySpec>* table);
void AddReaderKeys(std::vector<KeySpec>* table);
void AddReaderModelKeys(std::vector<KeySpec>* table);
void AddStorageKeys(std::vector<KeySpec>* table);
// The key sections implementations declare in their own folders, compiled into this module
// (config/sources.cmake lists their files) since a config is parsed before any registry exists;
// each writes into its implementation's options type in StorageConfig::backends (a pipeline's:
// ReaderConfig::pipelines). One line each.
void AddS3Keys(std::vector<KeySpec>* table);     // storage/s3/s3_keys.cc: storage.storage_options.*
void AddSlowKeys(std::vector<KeySpec>* table);   // storage/slow_keys.cc: storage.slow_*
void AddMpiioKeys(std::vector<KeySpec>* table);  // storage/mpiio_keys.cc: storage.mpiio_collective
// cache/tiered_keys.cc: storage.tiered_source, storage.tiers, storage.cache_policy, cache_scope
void AddTieredKeys(std::vector<KeySpec>* table);
// pipeline/pytorch_keys.cc: reader.persistent_workers (in ReaderConfig::pipelines)
void AddPytorchKeys(std::vector<KeySpec>* table);
// Checkpointers' key sections write into CheckpointConfig::checkpointers.
// checkpoint/torch_save_keys.cc: checkpoint.torch_state_dict, torch_modules, torch_file_name and
// torch_pickle_bytes
void AddTorchSaveKeys(std::vector<KeySpec>* table);
// checkpoint/h5py_save_keys.cc: checkpoint.h5py_datasets and h5py_file_name
void AddH5pySaveKeys(std::vector<KeySpec>* table);
// checkpoint/model_checkpoint_keys.cc: checkpoint.model_files
void AddModelCheckpointKeys(std::vector<KeySpec>* table);
// storage.mpiio_collective's rules among the other keys (storage/mpiio_keys.cc): every rank must
// make the same calls; WorkloadConfig::Validate runs it after the other checks.
Status ValidateMpiioKeys(const WorkloadConfig& c);
// Formats' key sections write into DatasetConfig::formats (key_builders.h: DLIO_FORMAT_FIELD).
// format/parquet/parquet_keys.cc: dataset.parquet.* (the dataset section), reader.pyarrow_read
void AddParquetKeys(std::vector<KeySpec>* table);
void AddParquetReaderKeys(std::vector<KeySpec>* table);
// format/webdataset/webdataset_keys.cc: dataset.webdataset_members, reader.tarfile_open (Reader)
void AddWebdatasetKeys(std::vector<KeySpec>* table);
void AddWebdatasetReaderKeys(std::vector<KeySpec>* table);
// format/hdf5/hdf5_keys.cc: dataset.enable_chunking, chunk_size, chunk_samples (Chunk);
// hdf5_shuffle, metadata_file, hdf5_lookup_rows, _row_bytes; hdf5.num_dset_per_record (Record);
// reader.h5py_reopen, hdf5_lookup_dataset (Reader)
void AddHdf5ChunkKeys(std::vector<KeySpec>* table);
void AddHdf5Keys(std::vector<KeySpec>* table);
void AddHdf5RecordKeys(std::vector<KeySpec>* table);
void AddHdf5ReaderKeys(std::vector<KeySpec>* table);
void AddNpyKeys(std::vector<KeySpec>* table);        // format/npy_keys.cc: dataset.sample_layout
void AddNpzReaderKeys(std::vector<KeySpec>* table);  // format/npy_keys.cc: reader.npz_members
// format/tfrecord/tfrecord_keys.cc: dataset.write_index, reader.use_index (Reader)
void AddTfrecordKeys(std::vector<KeySpec>* table);
void AddTfrecordReaderKeys(std::vector<KeySpec>* table);
// enable_chunking needs chunk_size or chunk_samples (format/hdf5/hdf5_keys.cc); Validate runs it
// where the dataset's rules are checked.
Status ValidateHdf5Keys(const WorkloadConfig& c);
// dataset.compression_ratio's needs under hdf5 (gzip, chunks of whole samples, one sample size)
// and npz (gzip): the formats' registry entries check them when the config names the format.
Status ValidateHdf5CompressionRatio(const WorkloadConfig& c);
// format/npy_keys.cc: npz's compression ratio (above), and reader.npz_members' names and model.
Status ValidateNpzConfig(const WorkloadConfig& c);
// dataset.hdf5.num_dset_per_record, for the record shape rules (config_shapes.cc).
uint64_t Hdf5DatasetsPerRecord(const WorkloadConfig& c);
void AddCsvKeys(std::vector<KeySpec>* table);  // format/csv/csv_keys.cc: csv_header
void AddPtKeys(std::vector<KeySpec>* table);   // format/torch/pt_keys.cc: pt_pickle_bytes
// format/image/image_keys.cc: dataset.image_quality, dataset.image_channels (jpeg, png)
void AddImageKeys(std::vector<KeySpec>* table);
// io_models/pyio_keys.cc: reader.pyio_head_bytes, pyio_read_size, pyio_call (io_model pyio)
void AddPyioKeys(std::vector<KeySpec>* table);
void AddMmapKeys(std::vector<KeySpec>* table);  // io_models/mmap_keys.cc
// dataset.parquet.partition_by: only "" (format/parquet/parquet_keys.cc); Validate runs it.
Status ValidateParquetKeys(const WorkloadConfig& c);
// dataset.image_channels: not 2 (format/image/image_keys.cc); Validate runs it.
Status ValidateImageKeys(const WorkloadConfig& c);

// The spec of `path` or nullptr.
const KeySpec* FindKey(const std::string& path);

// True when some key lives below `path` (so `path` names a section such as "model.parallelism").
bool IsSectionPrefix(const std::string& path);

// The accepted-not-used key that `path` lies below ("storage.storage_options" for
// "storage.storage_options.region"), or nullptr.
const KeySpec* FindAnyAncestor(const std::string& path);

// The closest known key to `path` by edit distance, or "" when nothing is close.
std::string SuggestKey(const std::string& path);

// The current value of `spec` in `config` rendered for docs ("8", "true", "\"npz\"", ...).
std::string RenderValue(const KeySpec& spec, WorkloadConfig& config);

// The accepted range of `spec` for docs and messages ("0 to 1024", "(0, 1]", "-1, or >= 1",
// "1 to 1 TiB"); "" for keys without one.
std::string RangeText(const KeySpec& spec);

// "" when the value of `spec` in `config` is acceptable on its own (in range, one of the accepted
// values, not empty when required, a valid distribution); else the problem, naming the key:
// "reader.read_threads: 100000 is out of range (accepted: 0 to 1024)".
std::string CheckValue(const KeySpec& spec, WorkloadConfig& config);

// storage.tiers[i].type from its config spelling; InvalidArgument "<key>: 'ssd' is not one of
// memory, directory" otherwise (config_check.cc, beside the tiers' other checks).
Result<CacheTierType> ParseTierType(const std::string& key, const std::string& text);

// The name of the current value of the kEnum `spec` in `config` (its number when out of range).
std::string EnumValueName(const KeySpec& spec, WorkloadConfig& config);

// Shortest round-trip text of a double ("0.9", "100", "1e-06").
std::string FormatDouble(double value);

const char* KeyTypeName(KeyType type);

// "a, b, c": accepted values for messages and docs.
std::string JoinAccepted(const std::vector<std::string>& values);

// `s` without leading and trailing spaces, tabs and line breaks.
std::string Trim(const std::string& s);

// DLIO's record shapes (config_shapes.cc): dataset.record_length_bytes from dataset.record_dims x
// the item size of record_element_type, and dataset.record_length_bytes_resize from
// reader.transformed_record_dims likewise, when the dims are given. Run after every parse and
// override, so dims win over a record_length given anywhere (as in DLIO); a format whose records
// are uint8 pixels whatever the type is counted later, with the registries
// (ApplyFormatRecordShapes). InvalidArgument naming the key when a size overflows.
Status DeriveRecordShapes(WorkloadConfig* config);

// Checks relating the shape keys to each other and to the format (config_validate.cc calls it).
Status ValidateRecordShapes(const WorkloadConfig& c);

// The specs of the comma-separated keys of `scale_keys`: integer counts only. InvalidArgument
// naming scale_keys for an unknown key or one that is not an integer.
Result<std::vector<const KeySpec*>> ScaleKeySpecs(const std::string& keys);

}  // namespace dlio::config_internal
