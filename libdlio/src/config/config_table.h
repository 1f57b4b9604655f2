// The one description of every config key: parsing, validation of enumerations, ConfigToJson,
// ConfigKeyDocs and docs/configuration.md all come from this table, so they cannot disagree.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dlio/config.h"

namespace dlio::config_internal {

enum class KeyType {
  kBool,
  kUint,
  kInt,
  kDouble,
  kString,
  kEnum,
  kDistribution,
  kDistributionStdev,  // DLIO's `<key>_stdev` sibling: turns a constant into normal(mean, stdev)
  kUintList,           // a list of unsigned integers ([1, 2, 3])
  kAny,                // accepted, not used: any value (scalar, list or map) is fine
};

enum KeyFlags : uint32_t {
  kNone = 0,
  kSizeUnits = 1u << 0,      // also accepts "4MiB", "256KB", "1GB" (see docs/configuration.md)
  kRoundFraction = 1u << 1,  // a fractional value is rounded (DLIO configs carry 114660.07)
  kStripSlash = 1u << 2,     // trailing '/' removed, as DLIO does for folders
};

// Maps a DLIO spelling of a value onto dlio's and may set related fields; returns the final
// value to store. `note` receives an explanation to add to the warnings (optional).
using CustomSetter = std::string (*)(WorkloadConfig& config, const std::string& value,
                                     std::string* note);

struct KeySpec {
  std::string path;  // "dataset.num_files_train"
  KeyType type = KeyType::kAny;
  std::string description;
  std::vector<std::string> accepted;  // kEnum: the accepted values, first listed in errors
  uint32_t flags = kNone;
  std::string alias_of;  // non-empty: another spelling of that key (not emitted in JSON)
  // Accessors: the one matching `type` is set (none for kAny and aliases).
  bool& (*bool_ref)(WorkloadConfig&) = nullptr;
  uint64_t& (*uint_ref)(WorkloadConfig&) = nullptr;
  int64_t& (*int_ref)(WorkloadConfig&) = nullptr;
  int& (*int32_ref)(WorkloadConfig&) = nullptr;
  double& (*double_ref)(WorkloadConfig&) = nullptr;
  std::string& (*string_ref)(WorkloadConfig&) = nullptr;
  DistributionSpec& (*dist_ref)(WorkloadConfig&) = nullptr;
  std::vector<uint64_t>& (*uint_list_ref)(WorkloadConfig&) = nullptr;
  CustomSetter custom = nullptr;  // kString / kEnum only
  int64_t int_min = INT64_MIN;    // kInt: smallest accepted value at parse time

  bool used() const { return type != KeyType::kAny; }
  bool emitted() const { return alias_of.empty() && used() && type != KeyType::kDistributionStdev; }
};

// Every key, grouped by section in documentation order. Built once; immutable.
const std::vector<KeySpec>& KeyTable();

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

// Shortest round-trip text of a double ("0.9", "100", "1e-06").
std::string FormatDouble(double value);

const char* KeyTypeName(KeyType type);

// The config spelling of a distribution type ("normal"); kept here rather than using core's
// DistributionTypeName so parse and print share one list.
const char* DistTypeName(DistributionSpec::Type type);

// "a, b, c": accepted values for messages and docs.
std::string JoinAccepted(const std::vector<std::string>& values);

// `s` without leading and trailing spaces, tabs and line breaks.
std::string Trim(const std::string& s);

// The specs of the comma-separated keys of `scale_keys`: integer counts only. InvalidArgument
// naming scale_keys for an unknown key or one that is not an integer.
Result<std::vector<const KeySpec*>> ScaleKeySpecs(const std::string& keys);

}  // namespace dlio::config_internal
