// The builders the key table (config_table.cc) is written with: one function per key type, the
// ranges they take and the field accessors. Included by the key table's files (config_table*.cc)
// and by the key sections storages and pipelines declare beside their code (storage/s3/s3_keys.cc,
// storage/slow_keys.cc, pipeline/pytorch_keys.cc).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "config/config_table.h"

namespace dlio::config_internal {

constexpr uint64_t kGiB = uint64_t{1} << 30;
constexpr uint64_t kTiB = uint64_t{1} << 40;
constexpr uint64_t kPiB = uint64_t{1} << 50;
constexpr uint64_t k4Gi = uint64_t{1} << 32;
// Longest emulated time of one step, sample or pause: an hour. Longer ones only make a run that
// sleeps for ever by mistake.
constexpr double kMaxSeconds = 3600;

// Accessor of one field as a plain function pointer (captureless lambdas convert).
#define DLIO_FIELD(T, member) \
  static_cast<T& (*)(WorkloadConfig&)>([](WorkloadConfig& c) -> T& { return c.member; })
// Accessor of one field of an implementation's own options type held in the config's
// StorageConfig::backends (made with its defaults on first use): the keys a storage declares
// beside its code (storage/s3/s3_keys.cc, storage/slow_keys.cc, storage/mpiio_keys.cc,
// cache/tiered_keys.cc).
#define DLIO_BACKEND_FIELD(Options, T, member) \
  static_cast<T& (*)(WorkloadConfig&)>(        \
      [](WorkloadConfig& c) -> T& { return c.storage.backends.Get<Options>().member; })
// Accessor of one field of a pipeline's own options type held in the config's
// ReaderConfig::pipelines (pipeline/pytorch_keys.cc).
#define DLIO_PIPELINE_FIELD(Options, T, member) \
  static_cast<T& (*)(WorkloadConfig&)>(         \
      [](WorkloadConfig& c) -> T& { return c.reader.pipelines.Get<Options>().member; })
// Getter and setter of an enum field of an implementation's own options type in
// StorageConfig::backends (cache/tiered_keys.cc), through the index of its value.
#define DLIO_BACKEND_ENUM_FIELD(Options, E, member)                              \
  static_cast<int (*)(WorkloadConfig&)>([](WorkloadConfig& c) {                  \
    return static_cast<int>(c.storage.backends.Get<Options>().member);           \
  }),                                                                            \
      static_cast<void (*)(WorkloadConfig&, int)>([](WorkloadConfig& c, int v) { \
        c.storage.backends.Get<Options>().member = static_cast<E>(v);            \
      }),                                                                        \
      EnumNames<E>::kNames
// The same for any OptionSections of the config, `sections` (a member path of WorkloadConfig,
// `dataset.formats`), and its spelling for formats' own options in DatasetConfig::formats (the
// keys a format declares beside its code: format/parquet/parquet_keys.cc,
// format/webdataset/webdataset_keys.cc).
#define DLIO_SECTION_FIELD(sections, Options, T, member) \
  static_cast<T& (*)(WorkloadConfig&)>(                  \
      [](WorkloadConfig& c) -> T& { return c.sections.Get<Options>().member; })
#define DLIO_SECTION_ENUM_FIELD(sections, Options, E, member)                                      \
  static_cast<int (*)(WorkloadConfig&)>(                                                           \
      [](WorkloadConfig& c) { return static_cast<int>(c.sections.Get<Options>().member); }),       \
      static_cast<void (*)(WorkloadConfig&, int)>(                                                 \
          [](WorkloadConfig& c, int v) { c.sections.Get<Options>().member = static_cast<E>(v); }), \
      EnumNames<E>::kNames
#define DLIO_FORMAT_FIELD(Options, T, member) \
  DLIO_SECTION_FIELD(dataset.formats, Options, T, member)
#define DLIO_FORMAT_ENUM_FIELD(Options, E, member) \
  DLIO_SECTION_ENUM_FIELD(dataset.formats, Options, E, member)
// Getter and setter of an enum field, through the index of its value.
#define DLIO_ENUM_FIELD(E, member)                                         \
  static_cast<int (*)(WorkloadConfig&)>(                                   \
      [](WorkloadConfig& c) { return static_cast<int>(c.member); }),       \
      static_cast<void (*)(WorkloadConfig&, int)>(                         \
          [](WorkloadConfig& c, int v) { c.member = static_cast<E>(v); }), \
      EnumNames<E>::kNames

struct URange {
  uint64_t min = 0, max = UINT64_MAX;
};
struct IRange {
  int64_t min = INT64_MIN, max = INT64_MAX;
};
struct DRange {
  double min = -HUGE_VAL, max = HUGE_VAL;
  bool min_exclusive = false;
};

inline KeySpec Make(std::string path, KeyType type, std::string desc, uint32_t flags = kNone) {
  KeySpec k;
  k.path = std::move(path);
  k.type = type;
  k.description = std::move(desc);
  k.flags = flags;
  return k;
}

inline KeySpec Bool(std::string path, bool& (*ref)(WorkloadConfig&), std::string desc) {
  KeySpec k = Make(std::move(path), KeyType::kBool, std::move(desc));
  k.bool_ref = ref;
  return k;
}

inline KeySpec Uint(std::string path, uint64_t& (*ref)(WorkloadConfig&), URange range,
                    std::string desc, uint32_t flags = kNone) {
  KeySpec k = Make(std::move(path), KeyType::kUint, std::move(desc), flags);
  k.uint_ref = ref;
  k.uint_min = range.min;
  k.uint_max = range.max;
  return k;
}

inline KeySpec Uint(std::string path, uint64_t& (*ref)(WorkloadConfig&), std::string desc,
                    uint32_t flags = kNone) {
  return Uint(std::move(path), ref, URange{}, std::move(desc), flags);
}

inline KeySpec Int(std::string path, int64_t& (*ref)(WorkloadConfig&), IRange range,
                   std::string desc, uint32_t flags = kNone) {
  KeySpec k = Make(std::move(path), KeyType::kInt, std::move(desc), flags);
  k.int_ref = ref;
  k.int_min = range.min;
  k.int_max = range.max;
  return k;
}

inline KeySpec Int32(std::string path, int& (*ref)(WorkloadConfig&), IRange range,
                     std::string desc) {
  KeySpec k = Make(std::move(path), KeyType::kInt, std::move(desc));
  k.int32_ref = ref;
  k.int_min = std::max<int64_t>(range.min, INT32_MIN);
  k.int_max = std::min<int64_t>(range.max, INT32_MAX);
  return k;
}

inline KeySpec Double(std::string path, double& (*ref)(WorkloadConfig&), DRange range,
                      std::string desc) {
  KeySpec k = Make(std::move(path), KeyType::kDouble, std::move(desc),
                   range.min_exclusive ? kMinExclusive : kNone);
  k.double_ref = ref;
  k.double_min = range.min;
  k.double_max = range.max;
  return k;
}

inline KeySpec String(std::string path, std::string& (*ref)(WorkloadConfig&), std::string desc,
                      uint32_t flags = kNone, CustomSetter custom = nullptr) {
  KeySpec k = Make(std::move(path), KeyType::kString, std::move(desc), flags);
  k.string_ref = ref;
  k.custom = custom;
  return k;
}

// A string that must be one of `accepted` (the built-in names of a registry).
inline KeySpec Choice(std::string path, std::string& (*ref)(WorkloadConfig&),
                      std::vector<std::string> accepted, std::string desc) {
  KeySpec k = String(std::move(path), ref, std::move(desc));
  k.accepted = std::move(accepted);
  return k;
}

template <size_t N>
KeySpec Enum(std::string path, int (*get)(WorkloadConfig&), void (*set)(WorkloadConfig&, int),
             const std::array<std::string_view, N>& names, std::string desc,
             CustomSetter custom = nullptr) {
  KeySpec k = Make(std::move(path), KeyType::kEnum, std::move(desc));
  k.enum_get = get;
  k.enum_set = set;
  for (std::string_view name : names) k.accepted.emplace_back(name);
  k.custom = custom;
  return k;
}

// A time distribution whose every parameter is at most kMaxSeconds.
inline KeySpec Dist(std::string path, DistributionSpec& (*ref)(WorkloadConfig&), std::string desc) {
  KeySpec k = Make(std::move(path), KeyType::kDistribution, std::move(desc));
  k.dist_ref = ref;
  k.double_max = kMaxSeconds;
  return k;
}

inline KeySpec DistStdev(std::string path, DistributionSpec& (*ref)(WorkloadConfig&),
                         const std::string& of) {
  KeySpec k = Make(std::move(path), KeyType::kDistributionStdev,
                   "DLIO sibling of " + of + ": a standard deviation > 0 turns a constant " + of +
                       " into normal(mean, stdev); applied after " + of + " whatever the order");
  k.dist_ref = ref;
  return k;
}

inline KeySpec UintList(std::string path, std::vector<uint64_t>& (*ref)(WorkloadConfig&),
                        std::string desc) {
  KeySpec k = Make(std::move(path), KeyType::kUintList, std::move(desc));
  k.uint_list_ref = ref;
  return k;
}

inline KeySpec CacheTiers(std::string path, std::vector<CacheTierOptions>& (*ref)(WorkloadConfig&),
                          std::string desc) {
  KeySpec k = Make(std::move(path), KeyType::kCacheTiers, std::move(desc));
  k.tiers_ref = ref;
  return k;
}

// A list of maps whose entries the declaring implementation parses, checks and renders (`hooks`).
inline KeySpec MapList(std::string path, MapListHooks hooks, std::string desc) {
  KeySpec k = Make(std::move(path), KeyType::kMapList, std::move(desc));
  k.map_list = hooks;
  return k;
}

inline KeySpec Alias(std::string path, std::string of) {
  KeySpec k = Make(std::move(path), KeyType::kAny, "alternative spelling of " + of);
  k.alias_of = std::move(of);
  return k;
}

inline KeySpec Unused(std::string path, std::string desc) {
  return Make(std::move(path), KeyType::kAny, std::move(desc));
}

}  // namespace dlio::config_internal
