// The storage section of the key table: the backends, the tiered cache, and where the s3
// storage's own section (storage/s3/s3_keys.cc) goes (docs/configuration.md).
#include "config/config_table.h"
#include "config/key_builders.h"

namespace dlio::config_internal {
namespace {

// AIStore's S3 endpoint when storage.storage_options.endpoint_url does not name one.
constexpr const char* kAistoreEndpoint = "http://localhost:8080/s3";
constexpr const char* kEndpointKey = "storage.storage_options.endpoint_url";

std::string StorageTypeSetter(WorkloadConfig& c, const std::string& value, std::string* note) {
  if (value == "local_fs") {
    *note = "storage.storage_type 'local_fs' (DLIO) maps to dlio's 'posix'";
    return "posix";
  }
  if (value == "aistore") {
    // AIStore serves the S3 API under /s3 of its proxy; DLIO's AIStore default is localhost:8080.
    // The endpoint is the s3 storage's key (storage/s3/s3_keys.cc), reached through the table.
    std::string& endpoint = FindKey(kEndpointKey)->string_ref(c);
    if (endpoint.empty()) endpoint = kAistoreEndpoint;
    *note = "storage.storage_type 'aistore' (DLIO) maps to dlio's 's3' through AIStore's S3 API";
    return "s3";
  }
  return value;
}

}  // namespace

void AddStorageKeys(std::vector<KeySpec>* t) {
  auto add = [t](KeySpec k) { t->push_back(std::move(k)); };
  add(String(
      "storage.storage_type", DLIO_FIELD(std::string, storage.storage_type),
      "storage registry name: posix (DLIO's local_fs maps here), memory, slow, mpiio, tiered, s3 "
      "(DLIO's aistore maps here, its endpoint_url defaulting to http://localhost:8080/s3); "
      "others are checked at run time",
      kNonEmpty, StorageTypeSetter));
  add(String("storage.storage_root", DLIO_FIELD(std::string, storage.storage_root),
             "prefix of relative data and checkpoint folders (DLIO's namespace)"));
  AddSlowKeys(t);  // the slow storage's own section (storage/slow_keys.cc)
  add(Bool("storage.mpiio_collective", DLIO_FIELD(bool, storage.mpiio_collective),
           "mpiio: collective reads (MPI_File_read_at_all) of the data files, opened on all "
           "ranks; needs one shared file, reader.pipeline sync with read_threads <= 1, drop_last "
           "(docs/scaling.md)"));
  add(String("storage.tiered_source", DLIO_FIELD(std::string, storage.tiered_source),
             "tiered: the storage whose files it caches (posix, slow, mpiio, ...)"));
  add(CacheTiers("storage.tiers", DLIO_FIELD(std::vector<CacheTierConfig>, storage.tiers),
                 "tiered: the cache levels, fastest first, each {type: memory or directory, path "
                 "(directory: made 0700 when missing; dlio writes only in its folder `.dlio-cache` "
                 "there), capacity_bytes (e.g. 4GiB), threads (copy threads, default 1)} "
                 "(docs/caching.md)"));
  add(Choice("storage.cache_policy", DLIO_FIELD(std::string, storage.cache_policy),
             {"monarch", "lru", "clairvoyant", "clairvoyant_static"},
             "tiered: monarch (copy on first read, no eviction), lru (evict least recently "
             "used), clairvoyant (prefetch the sampler's coming files, evict the farthest next "
             "use), clairvoyant_static (NoPFS: place the most used coming files, no eviction)"));
  add(Choice("storage.cache_scope", DLIO_FIELD(std::string, storage.cache_scope),
             {"node", "process"},
             "tiered: node (the ranks of a node share one cache, served to them by the node's "
             "first rank: no file copied twice a node) or process (each rank its own cache) "
             "(docs/caching.md)"));
  // s3 (docs/storage.md): DLIO's storage_options names, and dlio's s3_* tuning beside them;
  // the map's other keys are accepted (with a warning) as DLIO's.
  add(Unused("storage.storage_options",
             "DLIO: object-store options map; the s3 storage uses the keys below, any other "
             "key in it is accepted"));
  AddS3Keys(t);  // the s3 storage's own section (storage/s3/s3_keys.cc)
  add(Unused("storage.fsspec_plugin", "DLIO: fsspec backend name"));
  add(Unused("storage.fsspec_extra_params", "DLIO: fsspec parameters map"));
}

}  // namespace dlio::config_internal
